//! `#[retry]` against a real PostgreSQL server, which this library starts
//! itself: a throwaway cluster in a temporary directory, listening on a free
//! loopback port, stopped and deleted when the [`PgServer`] is dropped.
//!
//! ```text
//! cargo test -p backoff-postgres-tests -- --include-ignored             # the tests
//! cargo run -p backoff-postgres-tests --release --example pg_herd       # the herd, on a real server
//! cargo run -p backoff-postgres-tests --example job_queue                # a durable job queue
//! ```
//!
//! [`queue`] is a durable job queue whose workers, each a process of its
//! own (the `job_worker` binary), claim jobs with `FOR UPDATE SKIP LOCKED`
//! and reschedule failures with `Policy::delay_for`.
//!
//! The server binaries (`initdb`, `pg_ctl`, `postgres`) come from Debian's
//! `postgresql` package (`apt-get install postgresql`), found in
//! `/usr/lib/postgresql/<version>/bin`, in the directory named by
//! `PG_BINDIR`, or on `PATH`. When they are missing, [`PgServer::start`]
//! fails with an error that says which package to install: the tests fail,
//! they are never skipped.
//!
//! PostgreSQL refuses to run as root. Run as root (as CI does), the library
//! runs the server binaries as the `postgres` system user that the Debian
//! package creates, in a temporary directory handed to that user.
//!
//! `cargo test --workspace` must pass on a machine without PostgreSQL, and
//! it tests every member of the workspace, this package included: so the
//! tests that need a server are `#[ignore]`d, with the command above as the
//! reason, printed beside each of them. The package is not a default member:
//! a plain `cargo build` or `cargo test` in the workspace root skips it.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, NoTls};

pub mod queue;

/// The binaries a server needs, all in one directory.
const BINARIES: [&str; 3] = ["initdb", "pg_ctl", "postgres"];

/// The database superuser of every server this library starts.
pub const SUPERUSER: &str = "postgres";

/// How many times [`PgServer::start`] tries another port when the one it
/// picked was taken in the meantime (by another test starting its server).
const PORT_TRIES: u32 = 5;

/// Why a server could not be started.
#[derive(Debug)]
pub enum StartError {
    /// `initdb`, `pg_ctl` or `postgres` is not installed.
    BinariesMissing {
        /// Where they were looked for.
        searched: Vec<PathBuf>,
    },
    /// Running as root, and there is no `postgres` system user to run the
    /// server as.
    NoServerUser,
    /// A file system or process operation failed.
    Io {
        /// What was being done.
        what: String,
        /// The error.
        error: io::Error,
    },
    /// `initdb` or `pg_ctl` exited with an error.
    Command {
        /// The command line.
        command: String,
        /// Its output, and the server's log when there is one.
        output: String,
    },
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::BinariesMissing { searched } => {
                let searched: Vec<String> =
                    searched.iter().map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "the PostgreSQL server binaries ({}) are not installed: looked in {}. \
                     Install Debian's `postgresql` package (`sudo apt-get install postgresql`), \
                     or set PG_BINDIR to the directory that holds them",
                    BINARIES.join(", "),
                    searched.join(", ")
                )
            }
            StartError::NoServerUser => write!(
                f,
                "PostgreSQL refuses to run as root, and there is no `postgres` system user to \
                 run it as. Install Debian's `postgresql` package (it creates that user), or run \
                 the tests as another user"
            ),
            StartError::Io { what, error } => write!(f, "{what}: {error}"),
            StartError::Command { command, output } => {
                write!(f, "`{command}` failed:\n{output}")
            }
        }
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StartError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

fn io_error(what: impl Into<String>) -> impl FnOnce(io::Error) -> StartError {
    let what = what.into();
    move |error| StartError::Io { what, error }
}

/// A PostgreSQL server of its own: a fresh cluster in a temporary
/// directory, listening on `127.0.0.1` at a free port (and on a Unix socket
/// inside that directory), with the superuser [`SUPERUSER`] allowed in
/// without a password. Dropping it stops the server (even when a test
/// panics) and deletes the directory.
///
/// Tuned for tests, not for keeping data: `fsync`, `synchronous_commit` and
/// `full_page_writes` are off.
#[derive(Debug)]
pub struct PgServer {
    port: u16,
    bindir: PathBuf,
    data: PathBuf,
    run_as: Option<ServerUser>,
    running: bool,
    // Dropped last, after `drop` has stopped the server.
    dir: tempfile::TempDir,
}

/// The user the server binaries run as, when this process is root.
#[derive(Debug, Clone, Copy)]
struct ServerUser {
    uid: u32,
    gid: u32,
}

impl PgServer {
    /// Creates a cluster and starts its server, waiting until it accepts
    /// connections (about a second).
    ///
    /// # Errors
    ///
    /// [`StartError::BinariesMissing`] when PostgreSQL is not installed;
    /// otherwise, with the output of the command that failed and the
    /// server's log.
    pub fn start() -> Result<PgServer, StartError> {
        let bindir = find_bindir()?;
        let run_as = server_user()?;
        let dir = tempfile::Builder::new()
            .prefix("backoff-pg-")
            .tempdir()
            .map_err(io_error("creating a temporary directory"))?;
        if let Some(user) = run_as {
            std::os::unix::fs::chown(dir.path(), Some(user.uid), Some(user.gid)).map_err(
                io_error(format!(
                    "handing {} to the postgres user",
                    dir.path().display()
                )),
            )?;
        }
        let mut server = PgServer {
            port: 0,
            bindir,
            data: dir.path().join("data"),
            run_as,
            running: false,
            dir,
        };
        server.run(
            "initdb",
            &[
                "--pgdata".as_ref(),
                server.data.as_os_str(),
                "--username".as_ref(),
                SUPERUSER.as_ref(),
                "--auth=trust".as_ref(),
                "--encoding=UTF8".as_ref(),
                "--locale=C".as_ref(),
                "--no-sync".as_ref(),
                "--no-instructions".as_ref(),
            ],
        )?;
        server.start_on_free_port()?;
        Ok(server)
    }

    /// Picks a free port and starts the server on it; when another process
    /// took the port in between, tries again with another.
    fn start_on_free_port(&mut self) -> Result<(), StartError> {
        let log = self.dir.path().join("server.log");
        for attempt in 1..=PORT_TRIES {
            self.port = free_port()?;
            let options = format!(
                "-c listen_addresses=127.0.0.1 -p {} -k {} -c max_connections=300 \
                 -c shared_buffers=16MB -c fsync=off -c synchronous_commit=off \
                 -c full_page_writes=off",
                self.port,
                self.dir.path().display()
            );
            let started = self.run(
                "pg_ctl",
                &[
                    "start".as_ref(),
                    "--wait".as_ref(),
                    "--pgdata".as_ref(),
                    self.data.as_os_str(),
                    "--log".as_ref(),
                    log.as_os_str(),
                    "-o".as_ref(),
                    options.as_ref(),
                ],
            );
            match started {
                Ok(_) => {
                    self.running = true;
                    return Ok(());
                }
                Err(StartError::Command { output, .. })
                    if attempt < PORT_TRIES && output.contains("could not bind") =>
                {
                    // Someone else took the port: stop whatever half-started
                    // and try the next one.
                    self.stop();
                    continue;
                }
                Err(error) => return Err(error),
            }
        }
        unreachable!("the last try returns its error")
    }

    /// Runs one of the server binaries, as the server's user, from the
    /// temporary directory (which that user can read).
    fn run(&self, binary: &str, args: &[&std::ffi::OsStr]) -> Result<Output, StartError> {
        let path = self.bindir.join(binary);
        let mut command = Command::new(&path);
        command.args(args).current_dir(self.dir.path());
        // The server must not pick up a developer's PGDATA, PGPORT, ...
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("PG") {
                command.env_remove(key);
            }
        }
        if let Some(user) = self.run_as {
            command.uid(user.uid).gid(user.gid);
        }
        let line = format!(
            "{} {}",
            path.display(),
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let output = command
            .output()
            .map_err(io_error(format!("running `{line}`")))?;
        if output.status.success() {
            return Ok(output);
        }
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        if let Ok(log) = std::fs::read_to_string(self.dir.path().join("server.log")) {
            text.push_str("server log:\n");
            text.push_str(&log);
        }
        Err(StartError::Command {
            command: line,
            output: text,
        })
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`): nothing in it
    /// is kept anyway.
    fn stop(&mut self) {
        let _ = self.run(
            "pg_ctl",
            &[
                "stop".as_ref(),
                "--wait".as_ref(),
                "--mode=immediate".as_ref(),
                "--pgdata".as_ref(),
                self.data.as_os_str(),
            ],
        );
        self.running = false;
    }

    /// The TCP port on `127.0.0.1`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory of the server's Unix socket.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Connection settings for the `postgres` database as [`SUPERUSER`],
    /// over TCP on `127.0.0.1`.
    pub fn config(&self) -> tokio_postgres::Config {
        let mut config = tokio_postgres::Config::new();
        config
            .host("127.0.0.1")
            .port(self.port)
            .user(SUPERUSER)
            .dbname("postgres");
        config
    }

    /// Opens a connection and drives it on a spawned tokio task (so it
    /// needs a tokio runtime).
    ///
    /// # Errors
    ///
    /// When the server cannot be reached or refuses the connection.
    pub async fn connect(&self) -> Result<Client, tokio_postgres::Error> {
        let (client, connection) = self.config().connect(NoTls).await?;
        tokio::spawn(async move {
            // An error here means the connection broke; the client's next
            // call reports it.
            let _ = connection.await;
        });
        Ok(client)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if self.running {
            self.stop();
        }
    }
}

/// A port on `127.0.0.1` that nothing listens on right now.
fn free_port() -> Result<u16, StartError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(io_error("looking for a free port on 127.0.0.1"))?;
    let port = listener
        .local_addr()
        .map_err(io_error("looking for a free port on 127.0.0.1"))?
        .port();
    Ok(port)
}

/// The directory holding `initdb`, `pg_ctl` and `postgres`: `PG_BINDIR`,
/// else the newest `/usr/lib/postgresql/<version>/bin` (Debian's layout),
/// else the first directory of `PATH` that has them.
fn find_bindir() -> Result<PathBuf, StartError> {
    find_bindir_in(
        std::env::var_os("PG_BINDIR").map(PathBuf::from),
        Path::new("/usr/lib/postgresql"),
        std::env::var_os("PATH"),
    )
}

fn find_bindir_in(
    pg_bindir: Option<PathBuf>,
    debian: &Path,
    path: Option<std::ffi::OsString>,
) -> Result<PathBuf, StartError> {
    let has_all = |dir: &Path| BINARIES.iter().all(|b| dir.join(b).is_file());
    let mut searched = Vec::new();
    if let Some(dir) = pg_bindir {
        if has_all(&dir) {
            return Ok(dir);
        }
        searched.push(dir);
    }
    // Debian's versions: `15`, `16`, ... (and `9.6` before 10).
    let mut versions: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(debian)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let version = name
                .split('.')
                .map(str::parse)
                .collect::<Result<Vec<u32>, _>>()
                .ok()?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    versions.sort();
    if let Some((_, dir)) = versions.iter().rev().find(|(_, dir)| has_all(dir)) {
        return Ok(dir.clone());
    }
    searched.push(debian.join("<version>/bin"));
    if let Some(path) = path {
        if let Some(dir) = std::env::split_paths(&path).find(|dir| has_all(dir)) {
            return Ok(dir);
        }
        searched.push("PATH".into());
    }
    Err(StartError::BinariesMissing { searched })
}

/// `None` when this process may run the server itself; the `postgres`
/// system user when it is root.
fn server_user() -> Result<Option<ServerUser>, StartError> {
    if !nix::unistd::Uid::effective().is_root() {
        return Ok(None);
    }
    match nix::unistd::User::from_name(SUPERUSER) {
        Ok(Some(user)) if !user.uid.is_root() => Ok(Some(ServerUser {
            uid: user.uid.as_raw(),
            gid: user.gid.as_raw(),
        })),
        _ => Err(StartError::NoServerUser),
    }
}

/// The errors that a transaction should retry from the start: a
/// serialization failure (SQLSTATE `40001`) or a deadlock (`40P01`).
/// PostgreSQL's documentation recommends exactly this for `SERIALIZABLE`
/// and `REPEATABLE READ` transactions.
pub fn is_conflict(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&SqlState::T_R_SERIALIZATION_FAILURE)
        || e.code() == Some(&SqlState::T_R_DEADLOCK_DETECTED)
}

/// A lock wait that `lock_timeout` cut short (SQLSTATE `55P03`).
pub fn is_lock_timeout(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE)
}

/// The workload of the AWS experiment "Exponential Backoff And Jitter", on a
/// real server: writers that each add one to a shared counter row in a
/// `SERIALIZABLE` transaction, retried on a conflict with each of the herd
/// simulator's strategies (`examples/herd.rs` in the repository root).
pub mod herd {
    use backoff_runtime::retry;
    use tokio_postgres::{Client, Error, IsolationLevel};

    use super::is_conflict;

    /// The simulator's five strategies, in its order.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Strategy {
        /// `immediate`: retry at once.
        None,
        /// `exponential(base = "10ms", max = "2s")`, `jitter = "none"`.
        Exponential,
        /// The same with `jitter = "full"`.
        Full,
        /// The same with `jitter = "equal"`.
        Equal,
        /// `decorrelated(base = "5ms", max = "2s")`.
        Decorrelated,
    }

    impl Strategy {
        /// Every strategy, in the simulator's order.
        pub const ALL: [Strategy; 5] = [
            Strategy::None,
            Strategy::Exponential,
            Strategy::Full,
            Strategy::Equal,
            Strategy::Decorrelated,
        ];

        /// The name the simulator prints.
        pub const fn name(self) -> &'static str {
            match self {
                Strategy::None => "none",
                Strategy::Exponential => "exponential",
                Strategy::Full => "full",
                Strategy::Equal => "equal",
                Strategy::Decorrelated => "decorrelated",
            }
        }
    }

    /// Creates (or resets to zero) the counter row, `counter(id = 1, n)`.
    ///
    /// # Errors
    ///
    /// Any database error.
    pub async fn reset_counter(client: &Client) -> Result<(), Error> {
        client
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS counter (id int PRIMARY KEY, n bigint NOT NULL);
                 INSERT INTO counter VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET n = 0;",
            )
            .await
    }

    /// The counter's value.
    ///
    /// # Errors
    ///
    /// Any database error.
    pub async fn counter(client: &Client) -> Result<i64, Error> {
        Ok(client
            .query_one("SELECT n FROM counter WHERE id = 1", &[])
            .await?
            .get(0))
    }

    /// One writer: a connection of its own, and how many transactions it
    /// has started.
    #[derive(Debug)]
    pub struct Writer {
        /// The writer's connection.
        pub client: Client,
        /// Transactions started, failed ones included.
        pub attempts: u32,
    }

    impl Writer {
        /// A writer on `client` that has made no attempt yet.
        pub fn new(client: Client) -> Self {
            Writer {
                client,
                attempts: 0,
            }
        }

        /// Adds one to the counter with `strategy`, retrying conflicts
        /// without limit for up to a minute; returns the value it wrote.
        ///
        /// # Errors
        ///
        /// An error that is not a conflict, at once; a conflict, when the
        /// next retry would end more than a minute after the call began.
        pub async fn increment(&mut self, strategy: Strategy) -> Result<i64, Error> {
            match strategy {
                Strategy::None => self.increment_immediate().await,
                Strategy::Exponential => self.increment_exponential().await,
                Strategy::Full => self.increment_full_jitter().await,
                Strategy::Equal => self.increment_equal_jitter().await,
                Strategy::Decorrelated => self.increment_decorrelated().await,
            }
        }

        #[retry(immediate, attempts = unlimited, max_elapsed = "60s", when = is_conflict)]
        async fn increment_immediate(&mut self) -> Result<i64, Error> {
            self.increment_once().await
        }

        #[retry(exponential(base = "10ms", max = "2s"), jitter = "none",
                attempts = unlimited, max_elapsed = "60s", when = is_conflict)]
        async fn increment_exponential(&mut self) -> Result<i64, Error> {
            self.increment_once().await
        }

        #[retry(exponential(base = "10ms", max = "2s"), jitter = "full",
                attempts = unlimited, max_elapsed = "60s", when = is_conflict)]
        async fn increment_full_jitter(&mut self) -> Result<i64, Error> {
            self.increment_once().await
        }

        #[retry(exponential(base = "10ms", max = "2s"), jitter = "equal",
                attempts = unlimited, max_elapsed = "60s", when = is_conflict)]
        async fn increment_equal_jitter(&mut self) -> Result<i64, Error> {
            self.increment_once().await
        }

        #[retry(decorrelated(base = "5ms", max = "2s"),
                attempts = unlimited, max_elapsed = "60s", when = is_conflict)]
        async fn increment_decorrelated(&mut self) -> Result<i64, Error> {
            self.increment_once().await
        }

        /// One attempt: a `SERIALIZABLE` read-modify-write of the counter.
        /// Two writers that read the same value cannot both commit: the
        /// second fails with a serialization failure (`40001`), and its
        /// retry reads the new value.
        async fn increment_once(&mut self) -> Result<i64, Error> {
            self.attempts += 1;
            let tx = self
                .client
                .build_transaction()
                .isolation_level(IsolationLevel::Serializable)
                .start()
                .await?;
            let n: i64 = tx
                .query_one("SELECT n FROM counter WHERE id = 1", &[])
                .await?
                .get(0);
            tx.execute("UPDATE counter SET n = $1 WHERE id = 1", &[&(n + 1)])
                .await?;
            tx.commit().await?;
            Ok(n + 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory holding the three binaries (empty files will do).
    fn fake_bindir(dir: &Path) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        for binary in BINARIES {
            std::fs::write(dir.join(binary), "").unwrap();
        }
        dir.to_owned()
    }

    /// Without the binaries, the error names the package to install and
    /// where it looked, so a missing server fails loudly.
    #[test]
    fn missing_binaries_name_the_package() {
        let root = tempfile::tempdir().unwrap();
        let error = find_bindir_in(
            Some(root.path().join("nowhere")),
            &root.path().join("postgresql"),
            Some(root.path().as_os_str().to_owned()),
        )
        .unwrap_err();
        assert!(matches!(error, StartError::BinariesMissing { .. }));
        let message = error.to_string();
        assert!(message.contains("apt-get install postgresql"), "{message}");
        assert!(message.contains("nowhere"), "{message}");
        assert!(message.contains("postgresql/<version>/bin"), "{message}");
        assert!(message.contains("PG_BINDIR"), "{message}");
    }

    /// Debian's newest complete version wins (numerically: 9.6 < 15 < 16);
    /// `PG_BINDIR` comes first; `PATH` last.
    #[test]
    fn finds_debian_newest_version_then_path() {
        let root = tempfile::tempdir().unwrap();
        let debian = root.path().join("postgresql");
        fake_bindir(&debian.join("9.6/bin"));
        let v15 = fake_bindir(&debian.join("15/bin"));
        // 16 is incomplete: no initdb.
        fake_bindir(&debian.join("16/bin"));
        std::fs::remove_file(debian.join("16/bin/initdb")).unwrap();
        assert_eq!(find_bindir_in(None, &debian, None).unwrap(), v15);

        let own = fake_bindir(&root.path().join("own"));
        assert_eq!(
            find_bindir_in(Some(own.clone()), &debian, None).unwrap(),
            own
        );

        let on_path = fake_bindir(&root.path().join("on-path"));
        let path = std::env::join_paths([root.path().join("empty"), on_path.clone()]).unwrap();
        let nothing = root.path().join("nothing");
        assert_eq!(find_bindir_in(None, &nothing, Some(path)).unwrap(), on_path);
    }
}
