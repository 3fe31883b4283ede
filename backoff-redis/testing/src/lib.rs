//! Test support for `backoff-redis` (unpublished): a throwaway
//! `redis-server` for the fleet tests and the fleet simulation:
//! [`RedisServer::start`] runs one on a free loopback port, with no
//! persistence, and kills it on drop.

use std::io;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The server binary: `$REDIS_SERVER`, or `redis-server` on the `PATH`
/// (Debian's package `redis-server` installs `/usr/bin/redis-server`).
fn binary() -> String {
    std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned())
}

/// A `redis-server` of this process's own, killed when dropped.
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts a server on a free port of 127.0.0.1 and waits (at most 10 s)
    /// until it accepts connections.
    pub fn start() -> io::Result<RedisServer> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut server = RedisServer { port, child: None };
        server.restart()?;
        Ok(server)
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its URL, `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kills the server (SIGKILL: as a crash, or a network cut, looks to
    /// its clients) and waits for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The server's working directory (made on first use, removed on
    /// drop): where `SAVE` writes the `dump.rdb` that
    /// [`restart`](RedisServer::restart) then loads.
    pub fn dir(&self) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "backoff-redis-test-{}-{}",
            std::process::id(),
            self.port
        ));
        let _ = std::fs::create_dir_all(&dir);
        dir
    }

    /// The server's OS process id (while it runs).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Freezes the server (SIGSTOP): its sockets stay open and accept
    /// connections into the kernel's backlog, and nothing answers, until
    /// [`resume`](RedisServer::resume).
    pub fn freeze(&self) {
        self.signal("-STOP");
    }

    /// Lets a [`freeze`](RedisServer::freeze)d server run again (SIGCONT):
    /// it then runs what its clients sent meanwhile.
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        if let Some(pid) = self.pid() {
            let status = Command::new("kill")
                .args([signal, &pid.to_string()])
                .status();
            assert!(
                status.is_ok_and(|s| s.success()),
                "kill {signal} {pid} failed"
            );
        }
    }

    /// Starts it again on the same port, after [`kill`](RedisServer::kill):
    /// empty, unless a `SAVE` wrote its data to [`dir`](RedisServer::dir)
    /// (then it loads that).
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill();
        let child = Command::new(binary())
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            // Its own directory: a `SAVE` there is what a restart "with
            // its data" loads; nothing is saved otherwise.
            .arg("--dir")
            .arg(self.dir())
            // The fault-injection tests stall it with `DEBUG SLEEP`.
            .args(["--enable-debug-command", "yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "cannot run `{}` ({e}): install Debian's `redis-server` package",
                        binary()
                    ),
                )
            })?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                return Err(io::Error::other(format!(
                    "`redis-server` exited at start ({status})"
                )));
            }
            if Instant::now() > deadline {
                return Err(io::Error::other(
                    "`redis-server` did not listen within 10 s",
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(self.dir());
    }
}

/// Polls `done` every millisecond until it holds or `limit` passes;
/// whether it held. (For tests that wait on the fleet's background sync:
/// the limit is a bound against hanging, never a measured figure.)
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    done()
}

/// A TCP proxy on 127.0.0.1 that delays every byte by `delay` each way:
/// a Redis a round trip of `2 × delay` away. It runs until the process
/// ends (its threads hold only the sockets they copy).
pub fn delaying_proxy(target: u16, delay: Duration) -> io::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                continue;
            };
            for (from, to) in [
                (client.try_clone(), server.try_clone()),
                (server.try_clone(), client.try_clone()),
            ] {
                if let (Ok(from), Ok(to)) = (from, to) {
                    pipe_later(from, to, delay);
                }
            }
        }
    });
    Ok(port)
}

/// Copies `from` to `to`, each chunk `delay` after it arrived.
fn pipe_later(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    use std::io::{Read, Write};
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0
                || tx
                    .send((Instant::now() + delay, buf[..n].to_vec()))
                    .is_err()
            {
                break;
            }
        }
    });
    std::thread::spawn(move || {
        for (due, bytes) in rx {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
}
