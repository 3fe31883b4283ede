//! Breakers, budgets and throttles of `backoff-runtime` shared by a fleet
//! of processes through Redis.
//!
//! ```toml
//! [dependencies]
//! backoff-runtime = "0.1"
//! backoff-redis = "0.1"
//! ```
//!
//! A [`RedisStore`] hands out shared versions of a [`CircuitBreaker`]
//! ([`SharedBreaker`]), a [`RetryBudget`] ([`SharedBudget`]) and an
//! [`AdaptiveThrottle`] ([`SharedThrottle`]). `#[retry(circuit = ..)]`,
//! `#[retry(budget = ..)]` and `#[retry(throttle = ..)]` accept them as
//! they accept the local ones: as `&shared`, a field, or a `static` in a
//! [`LazyLock`](std::sync::LazyLock), through the core's public traits
//! ([`backoff_runtime::control`]'s `Circuit`, `Budget` and `Throttle`),
//! which each shared value implements by lending its local control. A
//! shared throttle also dereferences to its local [`AdaptiveThrottle`].
//!
//! The store drives each local control through the control's public fleet
//! hooks ([`CircuitBreaker::join_fleet`] and the `fleet_*` methods,
//! [`RetryBudget::adjust_milli`], [`AdaptiveThrottle::set_fleet`]): nothing
//! here reaches inside `backoff-runtime`.
//!
//! # Local first
//!
//! Each shared value owns a local breaker or budget, and every call uses
//! only that: the success path is the local one, and **no call ever waits
//! on Redis**. One background thread per store (a small tokio runtime of
//! its own, so a store works from synchronous code and from any runtime)
//! talks to Redis:
//!
//! - every `sync_every` (default 100 ms), and at once after a local failure,
//!   it pushes this process's counts and pulls the fleet's state, in one
//!   Lua script per breaker or budget (one round trip each);
//! - a breaker's opening and closing are also published (Redis pub/sub), so
//!   every process hears of them within a round trip, not a polling period.
//!
//! # A shared breaker
//!
//! Each process pushes running totals, never deltas (a count breaker: its
//! failures, its successes that ended a run, its current run; a rate
//! breaker: the calls and failures in its window), with a sequence number
//! the fleet applies only once: a push retried, or run late, counts
//! nothing twice, and a script the server runs after its client gave up on
//! it changes nothing. A success that ends a run of failures in any
//! process ends the fleet's run too: the counts of every process start
//! again from zero (that process keeps its failures after the success; a
//! success in a process with no failure counted is not reported: it costs
//! nothing, see below); it is a running total too, so a failed sync does
//! not lose it. The fleet opens when the counts of the processes heard
//! from in the last `3 × sync_every` (at least 1 s) reach the breaker's
//! threshold (for a rate breaker, `min_calls` calls and the failure ratio)
//! **and at least `quorum` distinct processes (default 2) report
//! failures**; no process counts for more than a quorum's share (a count
//! breaker: ⌈threshold / quorum⌉ failures; a rate breaker: ⌈the failures
//! the ratio needs / quorum⌉). So one process with a broken network opens
//! only its own local breaker (by its own rules), never the fleet's.
//!
//! When the fleet opens, every process holds its local breaker open. After
//! `open_for`, one trial call runs in the whole fleet: a process where a
//! call was refused claims the trial with `SET key NX PX open_for` (the
//! background thread does the round trip; the call that was refused does
//! not wait for it) and its next call is the trial. A successful trial
//! closes the fleet (published to every process); a failed one leaves it
//! open for another `open_for`, and the claim lapses after `open_for` if
//! the trial never reports. Nothing else closes it: a late success from a
//! call admitted before the opening does not, and a process that finds the
//! fleet's keys gone (`FLUSHALL`, a restart without data) keeps its breaker
//! open under its own rules (its own trial after `open_for`).
//!
//! # A shared budget
//!
//! The fleet keeps one bucket of `max_tokens`. Each process holds a share of
//! it locally (the bucket divided by the processes heard from), spends and
//! refills that share with no round trip, and at each sync gives its
//! balance back (spends and deposits included) and takes a new share in
//! the same script: retries across the fleet are bounded by the one
//! bucket. Before its first sync a process spends from a full local
//! bucket of its own (as a budget without a fleet does). Each sync is a
//! numbered transaction: a late or repeated one changes nothing, and one
//! whose answer was lost is undone by the next, so a stall neither makes
//! nor destroys tokens. A lease is reclaimed only once its process has
//! been unheard of for 10 × the report lifetime (at least 10 s); a process
//! that has not reached Redis for half of that gives its share up itself,
//! and gives back what was left of it at its next sync answered. A process
//! back after its lease was reclaimed undoes the reclaim (what it spent
//! while away is charged, the bucket staying below zero until refills
//! cover it); only what a process spent after its last sync and before it
//! died is unknown to the fleet, and reclaiming its lease may credit up to
//! that one share.
//!
//! # A shared throttle
//!
//! Each process counts its own requests and accepts in its window, and at
//! each sync reports them and hears the rest of the fleet's (the reports of
//! the processes heard from recently, each over its own window), which its
//! local throttle adds to its own: every process rejects with the
//! probability the whole fleet's counts give.
//!
//! # When Redis is unreachable or slow
//!
//! Every Redis command of the background thread has a timeout (the smaller
//! of `sync_every` and 250 ms, at least 50 ms); on an error the thread drops
//! the connection and reconnects after a backoff (this library's own
//! [`Policy::exponential`](backoff_runtime::Policy::exponential) from
//! 100 ms, full jitter, capped at 2 s), so a server that accepts
//! connections and refuses commands is not reconnected to on every local
//! failure. The store's [`health`](RedisStore::health) tells the last error
//! and the last good sync; a run of failures is logged once through
//! `tracing`. Once no sync has reached
//! Redis for 3 × `sync_every` (at least 1 s), each breaker follows its own
//! local rules (a breaker the fleet held open runs its own trial after
//! `open_for`), each budget keeps its local share, refilled
//! by its own successes, and each throttle counts only its own requests:
//! nothing blocks, and no call's outcome is lost.
//!
//! # Examples
//!
//! ```no_run
//! use backoff_redis::{RedisStore, SharedBreaker, SharedBudget};
//! use backoff_runtime::{CircuitBreaker, RetryBudget, retry};
//! use std::sync::LazyLock;
//! use std::time::Duration;
//!
//! static STORE: LazyLock<RedisStore> =
//!     LazyLock::new(|| RedisStore::new("redis://127.0.0.1/").expect("a valid url"));
//! static PAYMENTS: LazyLock<SharedBreaker> = LazyLock::new(|| {
//!     STORE.breaker("payments", CircuitBreaker::new(5, 1, Duration::from_secs(10)))
//! });
//! static RETRIES: LazyLock<SharedBudget> =
//!     LazyLock::new(|| STORE.budget("payments", RetryBudget::new(100, 0.1)));
//!
//! #[retry(attempts = 3, circuit = PAYMENTS, budget = RETRIES)]
//! fn charge(cents: u64) -> Result<(), std::io::Error> {
//!     # let _ = cents;
//!     Ok(())
//! }
//! # charge(5).unwrap();
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use core::fmt;
use core::time::Duration;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// The error of [`RedisStore::new`]: the `redis` crate's, re-exported so
/// that it can be named without depending on `redis` directly.
pub use redis::RedisError;

use backoff_runtime::circuit::{FleetReport, FleetTrip, TrialWanted};
use backoff_runtime::control::{Budget, Circuit, Throttle};
use backoff_runtime::{AdaptiveThrottle, CircuitBreaker, CircuitState, RetryBudget};

/// The default [`RedisStore::sync_every`].
pub const DEFAULT_SYNC_EVERY: Duration = Duration::from_millis(100);

/// The shortest [`RedisStore::sync_every`]: 1 ms.
pub const MIN_SYNC_EVERY: Duration = Duration::from_millis(1);

/// The longest [`RedisStore::sync_every`]: 1 s (the background thread looks
/// at least this often anyway; a fleet heard from less often would not
/// keep its breakers in step).
pub const MAX_SYNC_EVERY: Duration = Duration::from_secs(1);

/// The databases a store's URL may name: Redis' default configuration has
/// 16 (`databases 16`), numbered 0 to 15.
pub const DATABASES: core::ops::RangeInclusive<i64> = 0..=15;

/// The longest pause between reconnects after failed syncs.
const RECONNECT_CAP: Duration = Duration::from_secs(2);

/// The prefix of every key and channel a store uses.
const PREFIX: &str = "backoff";

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
    inner: Arc<Inner>,
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
struct Inner {
    client: redis::Client,
    /// This process's id in the fleet (random, with the OS process id).
    process: String,
    sync_every_ms: AtomicU64,
    breakers: Mutex<Vec<Arc<BreakerEntry>>>,
    budgets: Mutex<Vec<Arc<BudgetEntry>>>,
    throttles: Mutex<Vec<Arc<ThrottleEntry>>>,
    /// Wakes the thread: a failure, a refusal, a trial's verdict, a new
    /// shared value, or the store dropped.
    wake: tokio::sync::Notify,
    /// Syncs that reached Redis, and those that failed (for tests and
    /// simulations).
    synced: AtomicU64,
    failed: AtomicU64,
    health: Mutex<Health>,
    /// The server's clock minus this process's, in ms, as last heard.
    clock_offset: Mutex<Option<i64>>,
    /// The URL's password, never shown: taken out of every message.
    password: Option<String>,
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
    fn health_ok(&self) {
        let mut h = lock(&self.health);
        if h.failures_in_a_row > 0 {
            tracing::info!(
                target: "backoff_redis",
                failures = h.failures_in_a_row,
                "the fleet's Redis answers again"
            );
        }
        h.last_error = None;
        h.failures_in_a_row = 0;
        h.last_good_sync = Some(Instant::now());
    }

    fn health_failed(&self, error: &str) {
        let error = self.redact(error);
        let mut h = lock(&self.health);
        if h.failures_in_a_row == 0 {
            // Once per run of failures (syncs back off meanwhile).
            tracing::warn!(
                target: "backoff_redis",
                error = %error,
                "the fleet's Redis sync failed: shared breakers, budgets and throttles run locally until it answers"
            );
        }
        h.failures_in_a_row += 1;
        h.last_error = Some(error);
    }

    /// The deadline of a script sent now with `timeout`, in the server's
    /// milliseconds (0 before the server's clock is known): the client's
    /// clock, plus the offset last heard (a little under the true one, by
    /// the reply's way back), plus the timeout and 50 ms of margin. A
    /// script the server runs later has been given up on. Each connection
    /// reads the server's clock before its first script.
    fn deadline(&self, timeout: Duration) -> u64 {
        match *lock(&self.clock_offset) {
            Some(offset) => u64::try_from(
                i128::from(wall_ms()) + i128::from(offset) + i128::from(millis(timeout)) + 50,
            )
            .unwrap_or(0),
            None => 0,
        }
    }

    /// A reply stamped `server_ms` (the server's `TIME`) arrived now.
    fn heard(&self, server_ms: u64) {
        let offset = i128::from(server_ms) - i128::from(wall_ms());
        *lock(&self.clock_offset) = i64::try_from(offset).ok();
    }

    fn redact(&self, message: &str) -> String {
        match &self.password {
            Some(p) if !p.is_empty() => message.replace(p.as_str(), "***"),
            _ => message.to_owned(),
        }
    }
}

/// A URL that can never work: refused by [`RedisStore::new`].
fn invalid(what: &'static str, detail: String) -> RedisError {
    RedisError::from((redis::ErrorKind::InvalidClientConfig, what, detail))
}

impl RedisStore {
    /// A store for the server at `url` (`redis://host:port/db`), with its
    /// background thread started. Only the URL is checked here: the
    /// connection is made (and remade) by the thread, so a server that is
    /// down now is no error, its shared values run locally until it is up.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    ///
    /// assert!(RedisStore::new("not a url").is_err());
    /// let store = RedisStore::new("redis://127.0.0.1:1/").unwrap(); // nothing listens there
    /// # drop(store);
    /// ```
    pub fn new(url: &str) -> Result<RedisStore, RedisError> {
        let client = redis::Client::open(url)?;
        let info = client.get_connection_info();
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
            breakers: Mutex::new(Vec::new()),
            budgets: Mutex::new(Vec::new()),
            throttles: Mutex::new(Vec::new()),
            wake: tokio::sync::Notify::new(),
            synced: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            health: Mutex::new(Health::default()),
            clock_offset: Mutex::new(None),
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
        });
        let weak = Arc::downgrade(&self.inner);
        entry.breaker.join_fleet(Box::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.wake.notify_one();
            }
        }));
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
        let entry = Arc::new(BudgetEntry {
            name: name.to_owned(),
            budget,
            lease: Mutex::new(Lease::default()),
        });
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
        let entry = Arc::new(ThrottleEntry {
            name: name.to_owned(),
            throttle,
        });
        lock(&self.inner.throttles).push(Arc::clone(&entry));
        self.inner.wake.notify_one();
        SharedThrottle {
            entry,
            store: Arc::clone(&self.inner),
        }
    }
}

/// An [`AdaptiveThrottle`] that judges by the requests and accepts of a
/// whole fleet, shared through a [`RedisStore`].
///
/// Calls go through [`local`](SharedThrottle::local), this process's
/// throttle (also through `Deref`); the background thread adds the rest of
/// the fleet's counts to it at each sync.
///
/// ```no_run
/// use backoff_runtime::AdaptiveThrottle;
/// use backoff_redis::RedisStore;
/// use std::time::{Duration, Instant};
///
/// let store = RedisStore::new("redis://127.0.0.1/")?;
/// let throttle = store.throttle("search", AdaptiveThrottle::new(2.0, Duration::from_secs(120)));
/// match throttle.try_acquire(Instant::now()) {
///     Ok(permit) => permit.accepted(), // (after sending the request)
///     Err(rejected) => println!("{rejected}"),
/// }
/// # Ok::<(), backoff_redis::RedisError>(())
/// ```
///
/// `#[retry(throttle = ..)]` takes it as it takes a local throttle (it
/// implements [`backoff_runtime::control::Throttle`]):
///
/// ```no_run
/// use backoff_redis::{RedisStore, SharedThrottle};
/// use backoff_runtime::{AdaptiveThrottle, retry};
/// use std::sync::LazyLock;
/// use std::time::Duration;
///
/// static STORE: LazyLock<RedisStore> =
///     LazyLock::new(|| RedisStore::new("redis://127.0.0.1/").expect("a valid url"));
/// static SEARCH: LazyLock<SharedThrottle> = LazyLock::new(|| {
///     STORE.throttle("search", AdaptiveThrottle::new(2.0, Duration::from_secs(120)))
/// });
///
/// #[retry(attempts = 3, throttle = SEARCH)]
/// fn search(query: &str) -> Result<usize, std::io::Error> {
///     Ok(query.len())
/// }
/// # search("fleet").unwrap();
/// ```
pub struct SharedThrottle {
    entry: Arc<ThrottleEntry>,
    /// Keeps the store's thread running.
    store: Arc<Inner>,
}

struct ThrottleEntry {
    name: String,
    throttle: AdaptiveThrottle,
}

impl fmt::Debug for SharedThrottle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedThrottle")
            .field("name", &self.entry.name)
            .finish_non_exhaustive()
    }
}

impl SharedThrottle {
    /// This process's throttle, which every request asks.
    ///
    /// ```
    /// use backoff_runtime::AdaptiveThrottle;
    /// use backoff_redis::RedisStore;
    /// use std::time::{Duration, Instant};
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.throttle("a", AdaptiveThrottle::new(2.0, Duration::from_secs(60)));
    /// assert_eq!(shared.local().reject_probability(Instant::now()), 0.0);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    #[inline]
    pub fn local(&self) -> &AdaptiveThrottle {
        &self.entry.throttle
    }
}

/// `throttle = EXPR` accepts a shared throttle: every attempt asks its
/// local throttle, which counts the rest of the fleet's requests too.
impl Throttle for SharedThrottle {
    #[inline]
    fn as_throttle(&self) -> &AdaptiveThrottle {
        self.local()
    }
}

impl core::ops::Deref for SharedThrottle {
    type Target = AdaptiveThrottle;

    #[inline]
    fn deref(&self) -> &AdaptiveThrottle {
        &self.entry.throttle
    }
}

impl Drop for SharedThrottle {
    fn drop(&mut self) {
        lock(&self.store.throttles).retain(|e| !Arc::ptr_eq(e, &self.entry));
        self.store.wake.notify_one();
    }
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        // The thread stops once no shared value is left either.
        self.inner.wake.notify_one();
    }
}

/// A [`CircuitBreaker`] shared by a fleet through a [`RedisStore`]; what
/// `#[retry(circuit = ..)]` takes, as a reference, a field or a `static`
/// in a [`LazyLock`](std::sync::LazyLock).
///
/// Calls go through [`local`](SharedBreaker::local), this process's
/// breaker: the fleet opens it (and lets one trial through in the whole
/// fleet per `open_for`) from the background thread.
///
/// ```no_run
/// use backoff_redis::RedisStore;
/// use backoff_runtime::{CircuitBreaker, retry};
/// use std::time::Duration;
///
/// struct Client {
///     breaker: backoff_redis::SharedBreaker,
/// }
///
/// impl Client {
///     #[retry(attempts = 2, circuit = self.breaker)]
///     fn get(&self) -> Result<u32, std::io::Error> {
///         Ok(1)
///     }
/// }
///
/// let store = RedisStore::new("redis://127.0.0.1/")?;
/// let client = Client {
///     breaker: store.breaker("search", CircuitBreaker::new(5, 1, Duration::from_secs(5))).quorum(3),
/// };
/// assert_eq!(client.get()?, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SharedBreaker {
    entry: Arc<BreakerEntry>,
    /// Keeps the store's thread running.
    store: Arc<Inner>,
}

impl fmt::Debug for SharedBreaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedBreaker")
            .field("name", &self.entry.name)
            .field("state", &self.state())
            .field("quorum", &self.entry.quorum.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

struct BreakerEntry {
    name: String,
    breaker: CircuitBreaker,
    quorum: AtomicU32,
    /// What the thread last heard of the fleet.
    fleet: Mutex<FleetSeen>,
}

#[derive(Default)]
struct FleetSeen {
    /// The sequence number of this process's last push (the fleet applies
    /// a push only if it is newer than the last applied).
    seq: u64,
    /// The fleet's opening this process holds its breaker open for (0:
    /// not known).
    opening: u64,
    /// The fleet's trial key lapses then (a claim before is refused).
    trial_free_at: Option<tokio::time::Instant>,
}

impl SharedBreaker {
    /// Opens the fleet's breaker only when at least `n` distinct processes
    /// (1 at least; the default is 2) report failures.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.breaker("a", CircuitBreaker::new(5, 1, Duration::from_secs(1))).quorum(3);
    /// assert_eq!(shared.quorum_size(), 3);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn quorum(self, n: u32) -> Self {
        self.entry.quorum.store(n.max(1), Ordering::Relaxed);
        self
    }

    /// The quorum set by [`quorum`](SharedBreaker::quorum).
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.breaker("a", CircuitBreaker::new(5, 1, Duration::from_secs(1)));
    /// assert_eq!(shared.quorum_size(), 2);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn quorum_size(&self) -> u32 {
        self.entry.quorum.load(Ordering::Relaxed)
    }

    /// This process's breaker, which every call uses.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::{Duration, Instant};
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.breaker("a", CircuitBreaker::new(5, 1, Duration::from_secs(1)));
    /// shared.local().acquire(Instant::now()).unwrap().success();
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    #[inline]
    pub fn local(&self) -> &CircuitBreaker {
        &self.entry.breaker
    }

    /// The local breaker's state (held open while the fleet is open).
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::{CircuitBreaker, CircuitState};
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.breaker("a", CircuitBreaker::new(5, 1, Duration::from_secs(1)));
    /// assert_eq!(shared.state(), CircuitState::Closed);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn state(&self) -> CircuitState {
        self.entry.breaker.state()
    }

    /// Whether the fleet holds this process's breaker open (the fleet's
    /// breaker is open, as last heard from Redis).
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.breaker("a", CircuitBreaker::new(5, 1, Duration::from_secs(1)));
    /// assert!(!shared.fleet_open());
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    pub fn fleet_open(&self) -> bool {
        self.entry.breaker.fleet_held()
    }
}

/// `circuit = EXPR` accepts a shared breaker: every call acquires its
/// local breaker, which the fleet holds open when the fleet is open.
impl Circuit for SharedBreaker {
    #[inline]
    fn as_circuit(&self) -> &CircuitBreaker {
        self.local()
    }
}

impl core::ops::Deref for SharedBreaker {
    type Target = CircuitBreaker;

    #[inline]
    fn deref(&self) -> &CircuitBreaker {
        &self.entry.breaker
    }
}

impl Drop for SharedBreaker {
    fn drop(&mut self) {
        lock(&self.store.breakers).retain(|e| !Arc::ptr_eq(e, &self.entry));
        self.store.wake.notify_one();
    }
}

/// A [`RetryBudget`] whose bucket a fleet shares through a [`RedisStore`];
/// what `#[retry(budget = ..)]` takes, as a reference, a field or a
/// `static` in a [`LazyLock`](std::sync::LazyLock).
///
/// Calls spend and refill [`local`](SharedBudget::local), this process's
/// share of the fleet's bucket; the background thread trades it with the
/// fleet's bucket at each sync.
///
/// ```no_run
/// use backoff_redis::RedisStore;
/// use backoff_runtime::{RetryBudget, retry};
///
/// let store = RedisStore::new("redis://127.0.0.1/")?;
/// let budget = store.budget("search", RetryBudget::new(50, 0.1));
///
/// #[retry(attempts = 3, budget = &budget)]
/// fn search(budget: &backoff_redis::SharedBudget) -> Result<u32, std::io::Error> {
///     Ok(1)
/// }
/// assert_eq!(search(&budget)?, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SharedBudget {
    entry: Arc<BudgetEntry>,
    /// Keeps the store's thread running.
    store: Arc<Inner>,
}

impl fmt::Debug for SharedBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedBudget")
            .field("name", &self.entry.name)
            .field("local_tokens", &self.entry.budget.tokens())
            .finish_non_exhaustive()
    }
}

struct BudgetEntry {
    name: String,
    budget: RetryBudget,
    /// This process's side of its lease on the fleet's bucket.
    lease: Mutex<Lease>,
}

/// This process's side of its lease on a fleet's bucket.
#[derive(Default)]
struct Lease {
    /// The number of this process's last budget transaction.
    seq: u64,
    /// The number of the last transaction answered.
    ack: u64,
    /// Whether a sync has granted this process a share yet.
    joined: bool,
    /// What was left of the share (in thousandths) when this process gave
    /// it up, Redis having been away for half a lease (see
    /// [`lease_ttl`]): given back at the next sync answered, whether the
    /// fleet still holds the lease or reclaimed it meanwhile.
    dropped: Option<u64>,
}

impl SharedBudget {
    /// This process's share of the bucket, which every call spends and
    /// refills.
    ///
    /// ```
    /// use backoff_redis::RedisStore;
    /// use backoff_runtime::RetryBudget;
    ///
    /// let store = RedisStore::new("redis://127.0.0.1:1/")?;
    /// let shared = store.budget("a", RetryBudget::new(10, 0.5));
    /// assert_eq!(shared.local().max_tokens(), 10.0);
    /// # Ok::<(), backoff_redis::RedisError>(())
    /// ```
    #[inline]
    pub fn local(&self) -> &RetryBudget {
        &self.entry.budget
    }
}

/// `budget = EXPR` accepts a shared budget: every retry spends from its
/// local share of the fleet's bucket.
impl Budget for SharedBudget {
    #[inline]
    fn as_budget(&self) -> &RetryBudget {
        self.local()
    }
}

impl core::ops::Deref for SharedBudget {
    type Target = RetryBudget;

    #[inline]
    fn deref(&self) -> &RetryBudget {
        &self.entry.budget
    }
}

impl Drop for SharedBudget {
    fn drop(&mut self) {
        lock(&self.store.budgets).retain(|e| !Arc::ptr_eq(e, &self.entry));
        self.store.wake.notify_one();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// This process's wall clock, in ms since the Unix epoch.
fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, millis)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn process_id() -> String {
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

/// A breaker's sync: record this process's report (idempotently: a push
/// whose sequence number is not newer than the last one applied changes
/// nothing), drop stale ones, open the fleet when the reports trip it with
/// a quorum (publishing `open:GEN`), or close it when `ARGV[11]` says this
/// process's trial of opening `ARGV[14]` succeeded (publishing
/// `close:GEN`). Returns `{open, trial_ttl_ms, open_gen, closed_gen,
/// server_ms}`; `open` is 2, and nothing is changed, if the server runs it
/// after `ARGV[15]` (the client's deadline in the server's milliseconds,
/// 0 for none): its client timed out on it and pushes again.
///
/// A count breaker pushes running totals: its failures (`tot`), its
/// successes that ended a run (`ends`), and its current run. The fleet
/// counts each process's failures since its `base`, which a success
/// ending a run anywhere moves up to the process's total (its own to its
/// failures before its current run). A rate breaker pushes its window's
/// failures (`tot`) and calls.
///
/// KEYS: tot, base, ends, seq, calls (hashes), seen (zset), open, trial,
/// closed, gen.
/// ARGV: process, seq, failures, run or calls, run ends, stale_ms,
/// threshold, per_mille (0 for a count breaker), min_calls, quorum, event
/// ("closed" or ""), open_for_ms, channel, held generation, deadline.
const BREAKER_SYNC: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tot, base, ends, seqs, calls = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local seen, open, trial, closed, gen = KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local me, seq = ARGV[1], tonumber(ARGV[2])
local fails, ncalls, nends = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local stale, threshold, per_mille = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local min_calls, quorum, event = tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[11]
local open_for, channel, held = tonumber(ARGV[12]), ARGV[13], ARGV[14]
local keep = math.max(stale * 10, open_for * 4, 60000)
local function reply(o, ttl, g, c) return {o, ttl, g, c, now} end
-- A script that runs after its client gave up on it (a stall) changes
-- nothing: the client pushes again.
local deadline = tonumber(ARGV[15])
if deadline > 0 and now > deadline then return reply(2, 0, 0, 0) end
local function closed_gen() return tonumber(redis.call('GET', closed) or 0) end
if event == 'closed' then
  -- Only the opening this trial was for (a late script closes no later one).
  local g = redis.call('GET', open)
  if g and g == held then
    redis.call('DEL', open, trial)
    if per_mille > 0 then
      redis.call('DEL', tot, calls)
    else
      local all = redis.call('HGETALL', tot)
      for i = 1, #all, 2 do redis.call('HSET', base, all[i], all[i + 1]) end
    end
    redis.call('SET', closed, g, 'PX', keep)
    redis.call('PUBLISH', channel, 'close:' .. g)
  end
  return reply(0, 0, 0, closed_gen())
end
local is_open = redis.call('EXISTS', open) == 1
redis.call('ZADD', seen, now, me)
for _, p in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', now - stale)) do
  for _, h in ipairs({tot, base, ends, seqs, calls}) do redis.call('HDEL', h, p) end
  redis.call('ZREM', seen, p)
end
local last = tonumber(redis.call('HGET', seqs, me) or -1)
if seq > last then
  redis.call('HSET', seqs, me, seq)
  if per_mille > 0 then
    redis.call('HSET', tot, me, fails)
    redis.call('HSET', calls, me, ncalls)
  else
    local known = redis.call('HGET', ends, me)
    local ended = known and nends > tonumber(known)
    if ended and not is_open then
      -- A success here ended the fleet's run: every failure reported so
      -- far is behind it. (While open, a late success ends nothing.)
      local all = redis.call('HGETALL', tot)
      for i = 1, #all, 2 do redis.call('HSET', base, all[i], all[i + 1]) end
    end
    if ended or not known then
      -- This process's failures before its current run are behind it.
      redis.call('HSET', base, me, math.max(fails - ncalls, 0))
    end
    redis.call('HSET', ends, me, nends)
    redis.call('HSET', tot, me, fails)
  end
end
for _, k in ipairs({seen, tot, base, ends, seqs, calls}) do redis.call('PEXPIRE', k, keep) end
if is_open then
  return reply(1, math.max(redis.call('PTTL', trial), 0), tonumber(redis.call('GET', open)), 0)
end
local sum_f, sum_c, reporters = 0, 0, 0
local counts = {}
local all = redis.call('HGETALL', tot)
for i = 1, #all, 2 do
  local f = tonumber(all[i + 1])
  if per_mille == 0 then f = f - tonumber(redis.call('HGET', base, all[i]) or 0) end
  if f > 0 then
    reporters = reporters + 1
    counts[#counts + 1] = f
  end
end
local trips
if per_mille == 0 then
  -- At most a quorum's share of the threshold from any one process.
  local cap = math.ceil(threshold / quorum)
  for _, f in ipairs(counts) do sum_f = sum_f + math.min(f, cap) end
  trips = sum_f >= threshold
else
  local c = redis.call('HGETALL', calls)
  for i = 1, #c, 2 do sum_c = sum_c + tonumber(c[i + 1]) end
  -- At most a quorum's share of the failures the ratio needs from any
  -- one process.
  local needed = math.ceil(per_mille * sum_c / 1000)
  local cap = math.ceil(needed / quorum)
  for _, f in ipairs(counts) do sum_f = sum_f + math.min(f, cap) end
  trips = sum_c >= min_calls and sum_f > 0 and sum_f >= needed
end
if trips and reporters >= quorum then
  local g = redis.call('INCR', gen)
  redis.call('SET', open, g)
  redis.call('SET', trial, 'opened', 'PX', open_for)
  redis.call('PUBLISH', channel, 'open:' .. g)
  return reply(1, open_for, g, 0)
end
return reply(0, 0, 0, closed_gen())
"#;

/// A budget's sync, a transaction numbered `seq` per process: undo this
/// process's last transaction if its answer never arrived (`ack`, the last
/// number answered, is older: the balance given back is still the
/// process's, the share granted never reached it), take back this
/// process's balance, reclaim the leases of processes unheard of for
/// `lease_ttl` (a process cut off that long has given its lease up
/// itself), grant a new share (the bucket divided by the processes heard
/// from, rounded up to whole tokens). A transaction not newer than the
/// last applied, or run after its deadline, changes nothing. The bucket
/// and the leases together stay at most `max` (a refill beyond is
/// dropped; a give-back never is). Returns `{share, left, status,
/// server_ms}` in thousandths; status 2: nothing done.
///
/// A reclaimed lease is credited to the bucket and remembered (`reclaimed`,
/// `gone`, for 100 × `lease_ttl`): a process that comes back after it
/// undoes the reclaim first, so what it spent of its share meanwhile is
/// charged and what it kept (`dropped`, what was left when it gave its
/// share up, or its balance if it never did) is given back: the bucket may
/// go below zero until refills cover what the process spent.
///
/// KEYS: tokens, leases, lseq, lprev, ldelta (hashes), seen (zset),
/// reclaimed (hash), gone (zset).
/// ARGV: process, seq, ack, balance, max, lease_ttl_ms, deadline, dropped
/// (-1: none).
const BUDGET_SYNC: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tokens, leases, lseq, lprev, ldelta, seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local reclaimed, gone = KEYS[7], KEYS[8]
local me, seq, ack = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local balance, max, ttl, deadline = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local dropped = tonumber(ARGV[8])
if deadline > 0 and now > deadline then return {0, 0, 2, now} end
local left = tonumber(redis.call('GET', tokens) or max)
for _, p in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', now - ttl)) do
  local lease = tonumber(redis.call('HGET', leases, p) or 0)
  left = left + lease
  redis.call('HDEL', leases, p)
  redis.call('HSET', reclaimed, p, lease)
  redis.call('ZADD', gone, now, p)
  redis.call('ZREM', seen, p)
end
for _, p in ipairs(redis.call('ZRANGEBYSCORE', gone, '-inf', now - ttl * 100)) do
  for _, h in ipairs({lseq, lprev, ldelta, reclaimed}) do redis.call('HDEL', h, p) end
  redis.call('ZREM', gone, p)
end
local last = tonumber(redis.call('HGET', lseq, me) or 0)
if seq <= last then
  redis.call('SET', tokens, left)
  return {0, left, 2, now}
end
local back = redis.call('HGET', reclaimed, me)
if back then
  -- Back after its lease was reclaimed: as if the fleet had kept it.
  left = left - tonumber(back)
  redis.call('HSET', leases, me, back)
  redis.call('HDEL', reclaimed, me)
  redis.call('ZREM', gone, me)
end
if ack < last then
  left = left - tonumber(redis.call('HGET', ldelta, me) or 0)
  redis.call('HSET', leases, me, redis.call('HGET', lprev, me) or 0)
end
if dropped >= 0 then balance = balance + dropped end
redis.call('ZADD', seen, now, me)
local before = left
local others = 0
local all = redis.call('HGETALL', leases)
for i = 1, #all, 2 do
  if all[i] ~= me then others = others + tonumber(all[i + 1]) end
end
left = left + balance
if left + others > max then left = math.max(max - others, before) end
local n = math.max(redis.call('ZCARD', seen), 1)
-- Whole tokens (a share of 0.7 token allows no retry anywhere).
local share = math.max(math.min(math.ceil(math.ceil(left / n) / 1000) * 1000, left), 0)
left = left - share
redis.call('SET', tokens, left)
redis.call('HSET', lprev, me, redis.call('HGET', leases, me) or 0)
redis.call('HSET', leases, me, share)
redis.call('HSET', lseq, me, seq)
redis.call('HSET', ldelta, me, left - before)
return {share, left, 0, now}
"#;

/// A throttle's sync: record this process's window counts, drop stale
/// reports, return the rest of the fleet's `{requests, accepts}`.
///
/// A script run after its deadline (its client gave up on it) changes
/// nothing (status 2). Returns `{requests, accepts, status, server_ms}`.
///
/// KEYS: requests (hash), accepts (hash), seen (zset).
/// ARGV: process, requests, accepts, stale_ms, deadline.
const THROTTLE_SYNC: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = tonumber(ARGV[5])
if deadline > 0 and now > deadline then return {0, 0, 2, now} end
local req, acc, seen = KEYS[1], KEYS[2], KEYS[3]
local me, stale = ARGV[1], tonumber(ARGV[4])
for _, p in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', now - stale)) do
  redis.call('HDEL', req, p)
  redis.call('HDEL', acc, p)
  redis.call('ZREM', seen, p)
end
redis.call('ZADD', seen, now, me)
redis.call('HSET', req, me, ARGV[2])
redis.call('HSET', acc, me, ARGV[3])
local keep = math.max(stale * 10, 60000)
redis.call('PEXPIRE', seen, keep)
redis.call('PEXPIRE', req, keep)
redis.call('PEXPIRE', acc, keep)
local r, a = 0, 0
local all = redis.call('HGETALL', req)
for i = 1, #all, 2 do
  if all[i] ~= me then r = r + tonumber(all[i + 1]) end
end
all = redis.call('HGETALL', acc)
for i = 1, #all, 2 do
  if all[i] ~= me then a = a + tonumber(all[i + 1]) end
end
return {r, a, 0, now}
"#;

/// The background thread: a current-thread runtime of its own.
fn run(inner: Arc<Inner>) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    rt.block_on(sync_loop(inner));
}

struct Conn {
    con: redis::aio::MultiplexedConnection,
    /// The pub/sub listener's task (aborted with the connection).
    listener: tokio::task::JoinHandle<()>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

/// The schedule of reconnects after failed syncs: this library's own
/// exponential backoff from 100 ms with full jitter, to a cap of 2 s.
fn reconnect_policy() -> backoff_runtime::Policy {
    backoff_runtime::Policy::exponential(Duration::from_millis(100))
        .max_delay(RECONNECT_CAP)
        .unlimited_attempts()
}

async fn sync_loop(inner: Arc<Inner>) {
    let breaker_script = redis::Script::new(BREAKER_SYNC);
    let budget_script = redis::Script::new(BUDGET_SYNC);
    let throttle_script = redis::Script::new(THROTTLE_SYNC);
    let scripts = Scripts {
        breaker: &breaker_script,
        budget: &budget_script,
        throttle: &throttle_script,
    };
    let policy = reconnect_policy();
    let mut delays = policy.delays();
    // No connection is made (and no sync tried) before this instant: the
    // backoff after a failed sync.
    let mut retry_at: Option<tokio::time::Instant> = None;
    let mut conn: Option<Conn> = None;
    let mut next = tokio::time::Instant::now();
    // The last sync that reached Redis: the fleet's hold on a breaker
    // outlives a slow command or two, not an absence.
    let mut last_ok = tokio::time::Instant::now();
    loop {
        // Stop once the store and every shared value are gone.
        if Arc::strong_count(&inner) == 1 {
            return;
        }
        let every = Duration::from_millis(inner.sync_every_ms.load(Ordering::Relaxed));
        // The earliest lapse of a trial claim this process wants.
        let mut wake_at = next;
        for entry in lock(&inner.breakers).iter() {
            if let Some(at) = lock(&entry.fleet).trial_free_at
                && at < wake_at
            {
                wake_at = at;
            }
        }
        if let Some(at) = retry_at {
            // Backing off: wakes before then change nothing.
            wake_at = wake_at.max(at);
        }
        tokio::select! {
            () = tokio::time::sleep_until(wake_at) => {}
            () = inner.wake.notified(), if retry_at.is_none() => {}
            // (A dropped store has no strong count left to notice at once:
            // look again now and then.)
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
        let now = tokio::time::Instant::now();
        let timeout = every.clamp(Duration::from_millis(50), Duration::from_millis(250));
        let away = now.saturating_duration_since(last_ok) >= stale_after(every);
        if retry_at.is_some_and(|at| now < at) {
            if away {
                fall_back(&inner);
            }
            continue;
        }
        retry_at = None;
        if now >= next {
            next = now + every;
        }
        // A listener whose subscription ended (its connection broke) is
        // remade with the connection: polling alone would be a period late.
        if conn.as_ref().is_some_and(|c| c.listener.is_finished()) {
            conn = None;
        }
        let result = match conn.as_mut() {
            Some(c) => sync_all(&inner, c, &scripts, every, timeout).await,
            None => match connect(&inner, timeout).await {
                Ok(c) => sync_all(&inner, conn.insert(c), &scripts, every, timeout).await,
                Err(e) => Err(e),
            },
        };
        match result {
            Ok(()) => {
                inner.synced.fetch_add(1, Ordering::Relaxed);
                last_ok = tokio::time::Instant::now();
                delays = policy.delays();
                inner.health_ok();
            }
            Err(e) => {
                inner.failed.fetch_add(1, Ordering::Relaxed);
                conn = None;
                if away {
                    fall_back(&inner);
                }
                if now.saturating_duration_since(last_ok) >= lease_ttl(every) / 2 {
                    give_up_leases(&inner);
                }
                let delay = delays.next().unwrap_or(RECONNECT_CAP);
                retry_at = Some(tokio::time::Instant::now() + delay);
                inner.health_failed(&e);
            }
        }
    }
}

/// How long a report lives in the fleet, and how long the fleet's hold on a
/// breaker outlives failed syncs: 3 × `sync_every`, at least 1 s.
fn stale_after(every: Duration) -> Duration {
    every.saturating_mul(3).max(Duration::from_secs(1))
}

/// How long the fleet keeps the lease of a process it does not hear from
/// (10 × the report lifetime, at least 10 s); a process that has not
/// reached Redis for half of it gives its share up (spends only what its
/// own successes refill), so a lease is reclaimed only once its process no
/// longer spends it.
fn lease_ttl(every: Duration) -> Duration {
    stale_after(every)
        .saturating_mul(10)
        .max(Duration::from_secs(10))
}

/// Redis has been away for half a lease: every budget gives up its share
/// of the fleet's bucket (the fleet may reclaim it), keeping what it
/// refills itself from then on. What was left of the share is given back
/// at the next sync answered.
fn give_up_leases(inner: &Inner) {
    for entry in lock(&inner.budgets).iter() {
        let mut lease = lock(&entry.lease);
        if lease.joined && lease.dropped.is_none() {
            let balance = entry.budget.milli();
            entry
                .budget
                .adjust_milli(-i64::try_from(balance).unwrap_or(i64::MAX));
            lease.dropped = Some(balance);
        }
    }
}

/// Redis is away: every breaker follows its local rules again.
fn fall_back(inner: &Inner) {
    for entry in lock(&inner.breakers).iter() {
        if entry.breaker.fleet_held() {
            entry.breaker.fleet_release(false);
        }
        lock(&entry.fleet).trial_free_at = None;
    }
    for entry in lock(&inner.throttles).iter() {
        entry.throttle.set_fleet(0, 0);
    }
}

/// A new connection, with the server's clock read first: every script,
/// the first one included, then carries a deadline (see
/// [`Inner::deadline`]).
async fn connect(inner: &Arc<Inner>, timeout: Duration) -> Result<Conn, String> {
    let mut con = command(timeout, inner.client.get_multiplexed_async_connection()).await?;
    let (secs, micros): (u64, u64) =
        command(timeout, redis::cmd("TIME").query_async(&mut con)).await?;
    inner.heard(secs.saturating_mul(1000).saturating_add(micros / 1000));
    let pubsub = command(timeout, inner.client.get_async_pubsub()).await?;
    let weak = Arc::downgrade(inner);
    let listener = tokio::spawn(listen(pubsub, weak, timeout));
    Ok(Conn { con, listener })
}

/// Hears the fleet's breakers open and close.
async fn listen(mut pubsub: redis::aio::PubSub, inner: std::sync::Weak<Inner>, timeout: Duration) {
    use futures_util::StreamExt;
    let pattern = format!("{PREFIX}:b:*");
    if tokio::time::timeout(timeout, pubsub.psubscribe(&pattern))
        .await
        .map_or(true, |r| r.is_err())
    {
        return;
    }
    let mut messages = pubsub.on_message();
    while let Some(msg) = messages.next().await {
        let Some(inner) = inner.upgrade() else { return };
        let channel = msg.get_channel_name().to_owned();
        let Ok(payload) = msg.get_payload::<String>() else {
            continue;
        };
        for entry in lock(&inner.breakers).iter() {
            if channel == breaker_key(&entry.name, "ch") {
                match payload.split_once(':') {
                    Some(("open", opening)) => {
                        if let Ok(opening) = opening.parse() {
                            lock(&entry.fleet).opening = opening;
                        }
                        entry.breaker.fleet_hold(Instant::now());
                    }
                    // Only the close of the opening held here.
                    Some(("close", opening))
                        if entry.breaker.fleet_held()
                            && opening.parse() == Ok(lock(&entry.fleet).opening) =>
                    {
                        entry.breaker.fleet_release(true);
                        let mut seen = lock(&entry.fleet);
                        seen.opening = 0;
                        seen.trial_free_at = None;
                    }
                    _ => {}
                }
            }
        }
    }
}

fn breaker_key(name: &str, what: &str) -> String {
    format!("{PREFIX}:b:{name}:{what}")
}

fn throttle_key(name: &str, what: &str) -> String {
    format!("{PREFIX}:a:{name}:{what}")
}

fn budget_key(name: &str, what: &str) -> String {
    format!("{PREFIX}:t:{name}:{what}")
}

/// One sync of every shared value; `false` if Redis failed (or timed out).
struct Scripts<'a> {
    breaker: &'a redis::Script,
    budget: &'a redis::Script,
    throttle: &'a redis::Script,
}

async fn sync_all(
    inner: &Arc<Inner>,
    conn: &mut Conn,
    scripts: &Scripts<'_>,
    every: Duration,
    timeout: Duration,
) -> Result<(), String> {
    let (breaker_script, budget_script, throttle_script) =
        (scripts.breaker, scripts.budget, scripts.throttle);
    let stale = millis(stale_after(every));
    let breakers: Vec<_> = lock(&inner.breakers).clone();
    for entry in breakers {
        sync_breaker(inner, conn, breaker_script, &entry, stale, timeout).await?;
    }
    let throttles: Vec<_> = lock(&inner.throttles).clone();
    for entry in throttles {
        let (requests, accepts) = entry.throttle.own_counts(Instant::now());
        let mut invocation = throttle_script.prepare_invoke();
        invocation
            .key(throttle_key(&entry.name, "requests"))
            .key(throttle_key(&entry.name, "accepts"))
            .key(throttle_key(&entry.name, "seen"))
            .arg(&inner.process)
            .arg(requests)
            .arg(accepts)
            .arg(stale)
            .arg(inner.deadline(timeout));
        let (requests, accepts, status, server_ms): (u64, u64, u64, u64) =
            command(timeout, invocation.invoke_async(&mut conn.con)).await?;
        inner.heard(server_ms);
        if status == 2 {
            return Err("the server ran the throttle's sync after its deadline".into());
        }
        entry.throttle.set_fleet(requests, accepts);
    }
    let budgets: Vec<_> = lock(&inner.budgets).clone();
    for entry in budgets {
        let b = &entry.budget;
        let balance = b.milli();
        let (seq, ack, given, dropped) = {
            let mut lease = lock(&entry.lease);
            lease.seq += 1;
            // Before its first sync a process spends from a full bucket of
            // its own: that is not the fleet's to take back.
            let given = if lease.joined { balance } else { 0 };
            // -1: nothing dropped.
            let dropped = lease
                .dropped
                .map_or(-1, |d| i64::try_from(d).unwrap_or(i64::MAX));
            (lease.seq, lease.ack, given, dropped)
        };
        let mut invocation = budget_script.prepare_invoke();
        for what in [
            "tokens",
            "leases",
            "lseq",
            "lprev",
            "ldelta",
            "seen",
            "reclaimed",
            "gone",
        ] {
            invocation.key(budget_key(&entry.name, what));
        }
        invocation
            .arg(&inner.process)
            .arg(seq)
            .arg(ack)
            .arg(given)
            .arg(b.max_milli())
            .arg(millis(lease_ttl(every)))
            .arg(inner.deadline(timeout))
            .arg(dropped);
        // Not answered: the balance stays this process's (a transaction
        // that ran is undone by the next one).
        let (share, _left, status, server_ms): (u64, i64, u64, u64) =
            command(timeout, invocation.invoke_async(&mut conn.con)).await?;
        inner.heard(server_ms);
        if status == 2 {
            return Err("the server ran the budget's sync after its deadline".into());
        }
        let mut lease = lock(&entry.lease);
        lease.ack = seq;
        lease.joined = true;
        lease.dropped = None;
        // The balance given back is replaced by the share; what was spent
        // or deposited meanwhile stays counted.
        let delta = i64::try_from(share)
            .unwrap_or(i64::MAX)
            .saturating_sub(i64::try_from(balance).unwrap_or(i64::MAX));
        b.adjust_milli(delta);
    }
    Ok(())
}

async fn sync_breaker(
    inner: &Arc<Inner>,
    conn: &mut Conn,
    script: &redis::Script,
    entry: &BreakerEntry,
    stale: u64,
    timeout: Duration,
) -> Result<(), String> {
    let b = &entry.breaker;
    let held = b.fleet_held();
    // Held, and closed since: this process's trial (a grant) succeeded.
    let closed = held && b.state() == CircuitState::Closed;
    // (The mark is superseded by the running total of run ends.)
    let _ = b.fleet_take_succeeded();
    // One consistent snapshot: the run ends read before and after the
    // report agree (a success in between is in the next push).
    let (mut failures, mut calls, mut ends) = (0, 0, 0);
    for _ in 0..4 {
        let before = b.fleet_run_ends();
        (failures, calls) = match b.fleet_report(Instant::now()) {
            FleetReport::Count { failures, run } => (failures, run),
            FleetReport::Rate { failures, calls } => (failures, calls),
        };
        ends = b.fleet_run_ends();
        if ends == before {
            break;
        }
    }
    let (threshold, per_mille, min_calls) = match b.fleet_trip() {
        FleetTrip::Count { threshold } => (threshold, 0, 0),
        FleetTrip::Rate {
            per_mille,
            min_calls,
        } => (0, per_mille, min_calls),
    };
    let (seq, held_gen) = {
        let mut seen = lock(&entry.fleet);
        seen.seq += 1;
        (seen.seq, seen.opening)
    };
    let mut invocation = script.prepare_invoke();
    for what in [
        "tot", "base", "ends", "seq", "calls", "seen", "open", "trial", "closed", "gen",
    ] {
        invocation.key(breaker_key(&entry.name, what));
    }
    invocation
        .arg(&inner.process)
        .arg(seq)
        .arg(failures)
        .arg(calls)
        .arg(ends)
        .arg(stale)
        .arg(threshold)
        .arg(per_mille)
        .arg(min_calls)
        .arg(entry.quorum.load(Ordering::Relaxed))
        .arg(if closed { "closed" } else { "" })
        .arg(b.open_for_ms())
        .arg(breaker_key(&entry.name, "ch"))
        .arg(held_gen.to_string())
        .arg(inner.deadline(timeout));
    let (open, trial_ttl, open_gen, closed_gen, server_ms): (u64, u64, u64, u64, u64) =
        command(timeout, invocation.invoke_async(&mut conn.con)).await?;
    inner.heard(server_ms);
    if open == 2 {
        return Err("the server ran the sync after its deadline".into());
    }
    if closed {
        b.fleet_release(true);
        let mut seen = lock(&entry.fleet);
        seen.trial_free_at = None;
        seen.opening = 0;
        return Ok(());
    }
    if open == 0 {
        if held {
            // Closed by a trial (its message may not have arrived) only if
            // the closing is the one of the opening held here; otherwise
            // (the keys were lost: FLUSHALL, a restart without data) the
            // local breaker follows its own rules: a trial after `open_for`.
            let opening = lock(&entry.fleet).opening;
            b.fleet_release(opening != 0 && closed_gen == opening);
        }
        let mut seen = lock(&entry.fleet);
        seen.trial_free_at = None;
        seen.opening = 0;
        return Ok(());
    }
    lock(&entry.fleet).opening = open_gen;
    b.fleet_hold(Instant::now());
    // Open: claim the fleet's trial if a call here wants it and no grant is
    // waiting unused.
    let TrialWanted {
        wanted: want,
        grant_unused: granted,
    } = b.fleet_take_want();
    if granted {
        return Ok(());
    }
    if trial_ttl > 0 {
        // Claimed or opening: look again when it lapses (if wanted).
        lock(&entry.fleet).trial_free_at =
            want.then(|| tokio::time::Instant::now() + Duration::from_millis(trial_ttl));
        if want {
            // Keep the mark for then.
            b.fleet_mark_want();
        }
        return Ok(());
    }
    if !want {
        return Ok(());
    }
    let mut set = redis::cmd("SET");
    set.arg(breaker_key(&entry.name, "trial"))
        .arg(&inner.process)
        .arg("NX")
        .arg("PX")
        .arg(b.open_for_ms());
    let claimed: Option<String> = match command(timeout, set.query_async(&mut conn.con)).await {
        Ok(c) => c,
        Err(e) => {
            // Wanted still.
            b.fleet_mark_want();
            return Err(e);
        }
    };
    if claimed.is_some() {
        b.fleet_grant();
        lock(&entry.fleet).trial_free_at = None;
    } else {
        // Another process took it; look again when its claim lapses.
        b.fleet_mark_want();
        lock(&entry.fleet).trial_free_at =
            Some(tokio::time::Instant::now() + Duration::from_millis(b.open_for_ms()));
    }
    Ok(())
}

/// A command with the sync's timeout; its error as a message (which never
/// holds the URL: the `redis` crate's errors name no credentials).
async fn command<T>(
    timeout: Duration,
    fut: impl core::future::Future<Output = redis::RedisResult<T>>,
) -> Result<T, String> {
    match tokio::time::timeout(timeout, fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {timeout:?}")),
    }
}
