//! The store: the connection a fleet shares, its background thread's
//! shared state, and the constructors of the shared values.

use core::fmt;
use core::time::Duration;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use backoff_runtime::circuit::RemoteView;
use backoff_runtime::throttle::RemoteView as ThrottleView;
use backoff_runtime::{AdaptiveThrottle, CircuitBreaker, RetryBudget};

use crate::breaker::{BreakerEntry, FleetSeen, SharedBreaker};
use crate::budget::{self, BudgetEntry, SharedBudget};
use crate::sync::run;
use crate::throttle::{Rest, SharedThrottle, ThrottleEntry};
use crate::{
    COMMAND_TIMEOUTS, DATABASES, DEFAULT_COMMAND_TIMEOUT, DEFAULT_SYNC_EVERY, MAX_HOST_LEN,
    MAX_SYNC_EVERY, MIN_SYNC_EVERY, RedisError, lock, millis, wall_ms,
};

/// A connection to the Redis server that a fleet shares, and the background
/// thread that keeps this process's shared breakers and budgets in step
/// with it.
///
/// The thread stops once the store and every shared value made from it
/// are dropped (each shared value keeps it running).
///
/// ```no_run
/// use backoff_redis::RedisStore;
/// use std::time::Duration;
///
/// let store = RedisStore::new("redis://127.0.0.1:6379/")?.sync_every(Duration::from_millis(50));
/// assert_eq!(store.sync_period(), Duration::from_millis(50));
/// # Ok::<(), backoff_redis::RedisError>(())
/// ```
pub struct RedisStore {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("process", &self.inner.process)
            .field("sync_every", &self.sync_period())
            .field("health", &self.health())
            .finish_non_exhaustive()
    }
}

/// What the store, its thread and its shared values share.
pub(crate) struct Inner {
    pub(crate) client: redis::Client,
    /// This process's id in the fleet (random, with the OS process id).
    pub(crate) process: String,
    pub(crate) sync_every_ms: AtomicU64,
    pub(crate) command_timeout_ms: AtomicU64,
    pub(crate) breakers: Mutex<Vec<Arc<BreakerEntry>>>,
    pub(crate) budgets: Mutex<Vec<Arc<BudgetEntry>>>,
    pub(crate) throttles: Mutex<Vec<Arc<ThrottleEntry>>>,
    /// Wakes the thread: a failure, a refusal, a trial's verdict, a new
    /// shared value, or the store dropped.
    pub(crate) wake: tokio::sync::Notify,
    /// Syncs that reached Redis, and those that failed (for tests and
    /// simulations).
    pub(crate) synced: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) health: Mutex<Health>,
    /// The server's clock minus this process's, in ms, as last heard.
    pub(crate) clock_offset: Mutex<Option<i64>>,
    /// When the last command was sent (until its answer), and the last
    /// round trip measured.
    pub(crate) rtt: Mutex<(Option<Instant>, Duration)>,
    /// The URL's password, never shown: taken out of every message.
    pub(crate) password: Option<String>,
}

/// What a [`RedisStore`] knows of its server: see [`RedisStore::health`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Health {
    /// The error of the last sync that failed (could not connect, timed
    /// out, or an error from the server: a refused password, a server that
    /// is not Redis, `OOM`, `NOPERM`), with any password taken out; `None`
    /// once a sync succeeds again.
    pub last_error: Option<String>,
    /// When a sync last reached Redis.
    pub last_good_sync: Option<Instant>,
    /// Syncs failed since the last good one (each is followed by a pause
    /// of the reconnect backoff).
    pub failures_in_a_row: u64,
}

impl Inner {
    pub(crate) fn health_ok(&self) {
        let mut h = lock(&self.health);
        if h.failures_in_a_row > 0 {
            tracing::info!(
                target: "backoff_redis",
                failures = h.failures_in_a_row,
                "the fleet's Redis answers again"
            );
        }
        if h.failures_in_a_row > 0 || h.last_good_sync.is_none() {
            // (And at the first answer, so that a gauge reads 1 from it.)
            self.record_reachable(true);
        }
        h.last_error = None;
        h.failures_in_a_row = 0;
        h.last_good_sync = Some(Instant::now());
    }

    /// Tells the installed recorder (feature `record`) that Redis answered
    /// for the first time, stopped answering, or answers again.
    fn record_reachable(&self, reachable: bool) {
        #[cfg(feature = "record")]
        if let Some(r) = backoff_runtime::record::recorder() {
            r.remote_reachable(&self.process, reachable);
        }
        let _ = reachable;
    }

    pub(crate) fn health_failed(&self, error: &str) {
        let error = self.redact(error);
        let mut h = lock(&self.health);
        if h.failures_in_a_row == 0 {
            // Once per run of failures (syncs back off meanwhile).
            tracing::warn!(
                target: "backoff_redis",
                error = %error,
                "the fleet's Redis sync failed: shared breakers, budgets and throttles run locally until it answers"
            );
            self.record_reachable(false);
        }
        h.failures_in_a_row += 1;
        h.last_error = Some(error);
    }

    /// The deadline of a script sent now with `timeout`, in the server's
    /// milliseconds (0 before the server's clock is known): the client's
    /// clock, plus the offset last heard (a little under the true one, by
    /// the reply's way back), plus a window and 50 ms of margin. The window
    /// is four round trips as last measured, at least `sync_every` clamped
    /// to 50..=250 ms, at most `timeout`: a script the server runs later has been given up on, and
    /// its counts are stale (a late push of a run that a success has
    /// since ended would open the fleet), so a Redis 300 ms away gets a
    /// window of its own, and a local one that stalls does not. Each
    /// connection reads the server's clock before its first script.
    pub(crate) fn deadline(&self, timeout: Duration) -> u64 {
        // At least `sync_every` (clamped to 50..=250 ms), as the command
        // timeout was before it had its own.
        let every = Duration::from_millis(self.sync_every_ms.load(Ordering::Relaxed));
        let least = every.clamp(Duration::from_millis(50), Duration::from_millis(250));
        let window = {
            let mut rtt = lock(&self.rtt);
            rtt.0 = Some(Instant::now());
            rtt.1.saturating_mul(4).max(least).min(timeout)
        };
        match *lock(&self.clock_offset) {
            Some(offset) => u64::try_from(
                i128::from(wall_ms()) + i128::from(offset) + i128::from(millis(window)) + 50,
            )
            .unwrap_or(0),
            None => 0,
        }
    }

    /// A reply stamped `server_ms` (the server's `TIME`) arrived now, for
    /// the command sent last (its round trip is measured).
    pub(crate) fn heard(&self, server_ms: u64) {
        {
            let mut rtt = lock(&self.rtt);
            if let Some(sent) = rtt.0.take() {
                rtt.1 = sent.elapsed();
            }
        }
        let offset = i128::from(server_ms) - i128::from(wall_ms());
        *lock(&self.clock_offset) = i64::try_from(offset).ok();
    }

    pub(crate) fn redact(&self, message: &str) -> String {
        match &self.password {
            Some(p) if !p.is_empty() => message.replace(p.as_str(), "***"),
            _ => message.to_owned(),
        }
    }
}

/// What the `redis` crate accepts of a URL that can never work: spaces,
/// and a `%` not followed by two hex digits (in the password, it would
/// be sent as written and refused by every server). The error names the
/// part, never its text (it may be the password).
fn check_url(url: &str) -> Result<(), RedisError> {
    if url.chars().any(char::is_whitespace) {
        return Err(invalid(
            "space in the store's URL",
            "a URL has no spaces (a leading or trailing one included)".into(),
        ));
    }
    let bytes = url.as_bytes();
    for (i, _) in url.match_indices('%') {
        let hex = bytes.get(i + 1..i + 3);
        if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
            let at = url.rfind('@').unwrap_or(0);
            let part = if i < at {
                "user or password"
            } else {
                "host, path or query"
            };
            return Err(invalid(
                "bad percent-escape in the store's URL",
                format!("in its {part}: `%` must be followed by two hex digits"),
            ));
        }
    }
    Ok(())
}

/// A URL that can never work: refused by [`RedisStore::new`].
pub(crate) fn invalid(what: &'static str, detail: String) -> RedisError {
    RedisError::from((redis::ErrorKind::InvalidClientConfig, what, detail))
}

impl RedisStore {
    /// A store for the server at `url` (`redis://host:port/db`), with its
    /// background thread started. Only the URL is checked here: the
    /// connection is made (and remade) by the thread, so a server that is
    /// down now is no error, its shared values run locally until it is up.
    ///
    /// Refused, with an error naming the part (never its text, which may
    /// be the password): a URL the `redis` crate cannot parse, port 0, a
    /// database outside [`DATABASES`](crate::DATABASES), a space anywhere,
    /// a `%` not followed by two hex digits, a host longer than
    /// [`MAX_HOST_LEN`](crate::MAX_HOST_LEN), a unix socket path that does
    /// not exist.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    ///
    /// assert!(RedisStore::new("not a url").is_err());
    /// assert!(RedisStore::new(" redis://127.0.0.1/").is_err());
    /// assert!(RedisStore::new("redis://:pa%zz@127.0.0.1/").is_err());
    /// let store = RedisStore::new("redis://127.0.0.1:1/").unwrap(); // nothing listens there
    /// # drop(store);
    /// ```
    pub fn new(url: &str) -> Result<RedisStore, RedisError> {
        check_url(url)?;
        let client = redis::Client::open(url)?;
        let info = client.get_connection_info();
        match info.addr() {
            redis::ConnectionAddr::Unix(path) if !path.exists() => {
                return Err(invalid(
                    "unix socket path in the store's URL",
                    format!("{} does not exist", path.display()),
                ));
            }
            redis::ConnectionAddr::Tcp(host, _) | redis::ConnectionAddr::TcpTls { host, .. }
                if host.len() > MAX_HOST_LEN =>
            {
                return Err(invalid(
                    "host in the store's URL",
                    format!(
                        "{} characters: a host name has at most {MAX_HOST_LEN}",
                        host.len()
                    ),
                ));
            }
            _ => {}
        }
        if matches!(info.addr(), redis::ConnectionAddr::Tcp(_, 0)) {
            return Err(invalid(
                "port 0 in the store's URL",
                "a server listens on ports 1 to 65535".into(),
            ));
        }
        let db = info.redis_settings().db();
        if !DATABASES.contains(&db) {
            return Err(invalid(
                "database out of range in the store's URL",
                format!("{db}: Redis' default configuration has databases 0 to 15"),
            ));
        }
        let password = info.redis_settings().password().map(str::to_owned);
        let inner = Arc::new(Inner {
            client,
            process: process_id(),
            sync_every_ms: AtomicU64::new(millis(DEFAULT_SYNC_EVERY)),
            command_timeout_ms: AtomicU64::new(millis(DEFAULT_COMMAND_TIMEOUT)),
            breakers: Mutex::new(Vec::new()),
            budgets: Mutex::new(Vec::new()),
            throttles: Mutex::new(Vec::new()),
            wake: tokio::sync::Notify::new(),
            synced: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            health: Mutex::new(Health::default()),
            clock_offset: Mutex::new(None),
            rtt: Mutex::new((None, Duration::ZERO)),
            password,
        });
        let thread = Arc::clone(&inner);
        std::thread::Builder::new()
            .name("backoff-fleet".into())
            .spawn(move || run(thread))
            .map_err(|e| {
                redis::RedisError::from((
                    redis::ErrorKind::Io,
                    "cannot start the fleet's sync thread",
                    e.to_string(),
                ))
            })?;
        Ok(RedisStore { inner })
    }

    /// Syncs at most every `period`, plus once right after a local
    /// failure. The default is [`DEFAULT_SYNC_EVERY`], 100 ms; `period` is
    /// clamped to [`MIN_SYNC_EVERY`] (1 ms) ..= [`MAX_SYNC_EVERY`] (1 s): a
    /// longer one (`Duration::MAX` included) syncs every second, never not
    /// at all.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?.sync_every(Duration::from_millis(20));
    /// assert_eq!(store.sync_period(), Duration::from_millis(20));
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn sync_every(self, period: Duration) -> Self {
        self.inner.sync_every_ms.store(
            millis(period.clamp(MIN_SYNC_EVERY, MAX_SYNC_EVERY)),
            Ordering::Relaxed,
        );
        self.inner.wake.notify_one();
        self
    }

    /// How long the background thread waits for each Redis command (a
    /// connection, a sync's script) before it counts the sync as failed:
    /// [`DEFAULT_COMMAND_TIMEOUT`] (1 s) unless set here, clamped to
    /// [`COMMAND_TIMEOUTS`] (10 ms ..= 30 s). Apart from `sync_every`: a
    /// Redis 300 ms away syncs with the defaults. Only the thread waits:
    /// no call ever does.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?.command_timeout(Duration::from_secs(2));
    /// assert_eq!(store.command_timeout_period(), Duration::from_secs(2));
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn command_timeout(self, timeout: Duration) -> Self {
        let t = timeout.clamp(*COMMAND_TIMEOUTS.start(), *COMMAND_TIMEOUTS.end());
        self.inner
            .command_timeout_ms
            .store(millis(t), Ordering::Relaxed);
        self
    }

    /// The timeout set by [`command_timeout`](RedisStore::command_timeout).
    ///
    /// ```
    /// use backoff_redis::{DEFAULT_COMMAND_TIMEOUT, RedisStore};
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// assert_eq!(store.command_timeout_period(), DEFAULT_COMMAND_TIMEOUT);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn command_timeout_period(&self) -> Duration {
        Duration::from_millis(self.inner.command_timeout_ms.load(Ordering::Relaxed))
    }

    /// The period set by [`sync_every`](RedisStore::sync_every).
    ///
    /// ```
    /// use backoff_redis::{DEFAULT_SYNC_EVERY, RedisStore};
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// assert_eq!(store.sync_period(), DEFAULT_SYNC_EVERY);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn sync_period(&self) -> Duration {
        Duration::from_millis(self.inner.sync_every_ms.load(Ordering::Relaxed))
    }

    /// What the store knows of its server: the last error (with any
    /// password taken out), the last good sync, and the syncs failed since.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    ///
    /// let store = RedisStore::new("redis://:hunter2@127.0.0.1:1/")?;
    /// let health = store.health();
    /// assert_eq!(health.last_good_sync, None); // nothing listens on port 1
    /// assert!(!format!("{store:?} {health:?}").contains("hunter2"));
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn health(&self) -> Health {
        lock(&self.inner.health).clone()
    }

    /// This process's id among the fleet's reports (random per store).
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    ///
    /// let a = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let b = RedisStore::new("redis://127.0.0.1:1/")?;
    /// assert_ne!(a.process(), b.process());
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn process(&self) -> &str {
        &self.inner.process
    }

    /// How many syncs reached Redis, and how many failed (could not
    /// connect, timed out, or the server answered with an error), since the
    /// store was made.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let (ok, _failed) = store.syncs();
    /// assert_eq!(ok, 0); // nothing listens on port 1
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn syncs(&self) -> (u64, u64) {
        (
            self.inner.synced.load(Ordering::Relaxed),
            self.inner.failed.load(Ordering::Relaxed),
        )
    }

    /// `breaker`, shared by every process that names `name` on the same
    /// server (the breakers should be configured alike: each process
    /// judges the fleet's reports by its own threshold). Its quorum is 2;
    /// see [`SharedBreaker::quorum`].
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::{CircuitBreaker, CircuitState};
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.breaker("payments", CircuitBreaker::new(5, 1, Duration::from_secs(10)));
    /// assert_eq!(shared.state(), CircuitState::Closed);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn breaker(&self, name: &str, breaker: CircuitBreaker) -> SharedBreaker {
        let entry = Arc::new(BreakerEntry {
            name: name.to_owned(),
            breaker,
            quorum: AtomicU32::new(2),
            fleet: Mutex::new(FleetSeen::default()),
            joined: AtomicBool::new(false),
        });
        let weak = Arc::downgrade(&self.inner);
        // The breaker was moved in: it has no remote yet.
        let _ = RemoteView::attach(
            &entry.breaker,
            Box::new(move || {
                if let Some(inner) = weak.upgrade() {
                    inner.wake.notify_one();
                }
            }),
        );
        lock(&self.inner.breakers).push(Arc::clone(&entry));
        self.inner.wake.notify_one();
        SharedBreaker {
            entry,
            store: Arc::clone(&self.inner),
        }
    }

    /// `budget`, one bucket for every process that names `name` on the same
    /// server (of `budget`'s `max_tokens` and `token_ratio`).
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::RetryBudget;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.budget("payments", RetryBudget::new(100, 0.1));
    /// assert!(shared.local().try_spend()); // works locally while Redis is away
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn budget(&self, name: &str, budget: RetryBudget) -> SharedBudget {
        let entry = Arc::new(budget::entry(name, budget));
        lock(&self.inner.budgets).push(Arc::clone(&entry));
        self.inner.wake.notify_one();
        SharedBudget {
            entry,
            store: Arc::clone(&self.inner),
        }
    }
}

impl RedisStore {
    /// `throttle`, judging by the whole fleet's requests and accepts: each
    /// process counts its own in its window, and at each sync adds the
    /// rest of the fleet's (as last reported, each over its own window) to
    /// what its local throttle sees.
    ///
    /// ```
    /// use backoff_runtime::AdaptiveThrottle;
    /// use backoff_redis::RedisStore;
    /// use std::time::{Duration, Instant};
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.throttle("search", AdaptiveThrottle::new(2.0, Duration::from_secs(120)));
    /// shared.local().try_acquire(Instant::now()).unwrap().accepted();
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn throttle(&self, name: &str, throttle: AdaptiveThrottle) -> SharedThrottle {
        let rest = Arc::new(AtomicU64::new(0));
        // The throttle was moved in: it has no remote yet.
        let _ = ThrottleView::attach(&throttle, Box::new(Rest(Arc::clone(&rest))));
        let entry = Arc::new(ThrottleEntry {
            name: name.to_owned(),
            throttle,
            joined: AtomicBool::new(false),
            rest,
        });
        lock(&self.inner.throttles).push(Arc::clone(&entry));
        self.inner.wake.notify_one();
        SharedThrottle {
            entry,
            store: Arc::clone(&self.inner),
        }
    }
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        // The thread stops once no shared value is left either.
        self.inner.wake.notify_one();
    }
}

pub(crate) fn process_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(NEXT.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{}-{:016x}", std::process::id(), h.finish())
}
