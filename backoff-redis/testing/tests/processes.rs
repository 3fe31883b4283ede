//! Real processes of a fleet sharing a breaker through a real
//! `redis-server` that the test starts on a free port (`src/bin/fleet_child.rs`
//! is each process). `#[ignore]`d, as every test that needs the server:
//!
//! ```text
//! cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored
//! ```

use std::process::{Command, Stdio};

use backoff_redis_testing::RedisServer;

fn server() -> RedisServer {
    RedisServer::start().unwrap_or_else(|e| panic!("cannot start redis-server: {e}"))
}

/// Real processes of a fleet: one failing
/// alone opens nothing elsewhere; a second one makes the quorum, and the
/// watcher, which made no call, is told the fleet is open.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn separate_processes_share_a_breaker() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Child, ChildStdout};

    let server = server();
    let spawn = |args: &[&str]| -> (Child, BufReader<ChildStdout>) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fleet_child"))
            .arg(server.url())
            .arg("processes")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the child starts");
        let out = BufReader::new(child.stdout.take().expect("piped"));
        (child, out)
    };
    let ask = |child: &mut Child, out: &mut BufReader<ChildStdout>, request: &str| -> String {
        if !request.is_empty() {
            let stdin = child.stdin.as_mut().expect("piped");
            writeln!(stdin, "{request}")
                .and_then(|()| stdin.flush())
                .expect("the child reads");
        }
        let mut line = String::new();
        out.read_line(&mut line).expect("the child answers");
        line.trim().to_owned()
    };
    let (mut watcher, mut watched) = spawn(&["watch"]);
    assert_eq!(ask(&mut watcher, &mut watched, ""), "ready");
    // 5 failures in one process: its own breaker opens, the fleet's not.
    let (mut first, mut first_out) = spawn(&["fail", "5"]);
    assert_eq!(ask(&mut first, &mut first_out, ""), "ready");
    assert_eq!(ask(&mut watcher, &mut watched, "state"), "closed");
    // 2 more in a second process: 3 (at most ceil(5 / 2) from one) + 2.
    let (mut second, mut second_out) = spawn(&["fail", "2"]);
    assert_eq!(ask(&mut second, &mut second_out, ""), "ready");
    assert_eq!(ask(&mut watcher, &mut watched, "wait-open"), "open");
    assert_eq!(ask(&mut first, &mut first_out, "wait-open"), "open");
    for mut child in [watcher, first, second] {
        drop(child.stdin.take());
        assert!(child.wait().expect("the child exits").success());
    }
}

/// A child spending from the shared budget NAME of `max` tokens (no
/// refill), and the count of tokens it has spent so far (a thread reads
/// its output).
struct Spender {
    child: std::process::Child,
    spent: std::sync::Arc<std::sync::atomic::AtomicU64>,
    ready: std::sync::mpsc::Receiver<()>,
}

impl Spender {
    fn spawn(server: &RedisServer, name: &str, max: u32, when: &str) -> Spender {
        use std::io::{BufRead, BufReader};
        use std::sync::atomic::Ordering;
        let mut child = Command::new(env!("CARGO_BIN_EXE_fleet_child"))
            .arg(server.url())
            .arg(name)
            .args(["budget", &max.to_string(), when])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the child starts");
        let out = BufReader::new(child.stdout.take().expect("piped"));
        let spent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (tx, ready) = std::sync::mpsc::channel();
        let count = spent.clone();
        std::thread::spawn(move || {
            for line in out.lines() {
                match line.as_deref() {
                    Ok("1") => {
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                    Ok("ready") => {
                        let _ = tx.send(());
                    }
                    _ => return,
                }
            }
        });
        Spender {
            child,
            spent,
            ready,
        }
    }

    fn wait_ready(&self) {
        self.ready
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the child's budget joined its fleet");
    }

    fn go(&mut self) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().expect("piped");
        writeln!(stdin, "go")
            .and_then(|()| stdin.flush())
            .expect("the child reads");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status();
        assert!(status.is_ok_and(|s| s.success()), "kill {signal}");
    }

    /// Kills it (SIGKILL: a crash) and gives the tokens it spent.
    fn kill(mut self) -> u64 {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The reader ends with the pipe; what it read is all there is.
        std::thread::sleep(std::time::Duration::from_millis(20));
        self.spent.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A child still running when its test fails is killed too: in mode `now`
/// with nothing left to spend it would run on after the test process.
impl Drop for Spender {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Issue 45, R1: processes that crash-loop spend from the fleet's bucket
/// from their first call. Four processes restarting every 50–350 ms for
/// 6 s against a 30-token bucket without refill: at most the bucket plus
/// one startup allowance per start (each child spends as fast as it can;
/// a new process used to spend a full private bucket of 30 before its
/// first sync: 3,990 retries in 132 starts).
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn crash_looping_processes_spend_the_bucket_plus_one_allowance_per_start() {
    let server = server();
    let start = std::time::Instant::now();
    let slots: Vec<_> = (0..4u64)
        .map(|slot| {
            let server = &server;
            move || {
                let (mut spent, mut starts) = (0, 0);
                let mut lives = (slot * 7 + 3) % 11;
                while start.elapsed() < std::time::Duration::from_secs(6) {
                    let child = Spender::spawn(server, "crashloop", 30, "now");
                    starts += 1;
                    // Lives of 50 to 350 ms, spread without a clock's help.
                    lives = (lives * 5 + 3) % 11;
                    std::thread::sleep(std::time::Duration::from_millis(50 + lives * 30));
                    spent += child.kill();
                }
                (spent, starts)
            }
        })
        .collect();
    let (spent, starts) = std::thread::scope(|s| {
        let handles: Vec<_> = slots.into_iter().map(|f| s.spawn(f)).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a slot"))
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
    });
    let bound = 30 + starts * u64::from(backoff_redis::DEFAULT_STARTUP_TOKENS);
    eprintln!("{spent} retries from a 30-token bucket in {starts} starts (bound {bound})");
    assert!(starts >= 40, "{starts} starts");
    assert!(spent <= bound, "{spent} retries: more than {bound}");
}

/// Issue 45, R2: a process frozen (SIGSTOP) past its lease spends nothing
/// of it when it runs again, even when its calls run before its sync
/// thread: the fleet reclaimed the lease and the others spent it (36 of
/// 30 before).
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_process_frozen_past_its_lease_spends_nothing_of_it() {
    let server = server();
    let mut children: Vec<Spender> = (0..3)
        .map(|_| Spender::spawn(&server, "frozen", 30, "go"))
        .collect();
    for c in &children {
        c.wait_ready();
    }
    // Every child holds a share now; the third is frozen with its share.
    std::thread::sleep(std::time::Duration::from_millis(200));
    children[2].signal("-STOP");
    children[0].go();
    children[1].go();
    // The lease is 10 s; the others reclaim it after that and spend it.
    std::thread::sleep(std::time::Duration::from_secs(12));
    // Told to spend while frozen: it reads `go` the moment it runs again.
    children[2].go();
    children[2].signal("-CONT");
    std::thread::sleep(std::time::Duration::from_secs(2));
    let spent: Vec<u64> = children.into_iter().map(Spender::kill).collect();
    eprintln!("spent {spent:?} from a 30-token bucket, the third frozen 12 s");
    assert_eq!(spent.iter().sum::<u64>(), 30, "{spent:?}");
}
