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
//! The store drives each local control through the core's public
//! extension point for it ([`backoff_runtime::circuit::RemoteView`],
//! [`backoff_runtime::budget::RemoteView`],
//! [`backoff_runtime::throttle::RemoteView`]): nothing here reaches inside
//! `backoff-runtime`.
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
//! refills that share with no round trip. At each sync it keeps what it
//! holds up to its fair share (spendable while the script runs), takes the
//! rest out of its local bucket at once (so nothing it gives back can be
//! spent meanwhile) and gives it back, and the same script tops it up to a
//! fair share: retries across the fleet are bounded by the one bucket.
//! Before its first answered sync a process holds only a small startup
//! allowance ([`SharedBudget::startup_tokens`], default
//! [`DEFAULT_STARTUP_TOKENS`], 1); what it spends of it is charged to the
//! fleet at that sync, so N processes crash-looping at any rate spend at
//! most the bucket plus one allowance per start.
//! [`SharedBudget::joined`] (and `joined()` on a shared breaker or
//! throttle) tells whether a sync has answered for it. Each sync is a
//! numbered transaction: a late or repeated one changes nothing, and one
//! whose answer was lost is undone by the next, so a stall neither makes
//! nor destroys tokens. A share is spendable only until its lease expires
//! by the process's own monotonic clock (half a lease after the sync that
//! granted it was sent): a process frozen past it (SIGSTOP, a paused VM)
//! spends nothing of it, even if its calls run before its sync thread.
//! The fleet reclaims a lease once its process has been unheard of for 10 ×
//! the report lifetime (at least 10 s); a process that has not reached
//! Redis for half of that gives its share up itself (then spends only
//! what its own successes refill), and gives back what was left of it at
//! its next sync answered. A process back after its lease was reclaimed
//! undoes the reclaim (what it spent while away is charged, the bucket
//! staying below zero until refills cover it); only what a process spent
//! after its last sync and before it died is unknown to the fleet, and
//! reclaiming its lease may credit up to that one share.
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
//! Every Redis command of the background thread has a timeout of its own,
//! [`RedisStore::command_timeout`] (default 1 s, apart from `sync_every`,
//! so a Redis 300 ms away works with the defaults); on an error the thread drops
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

use core::time::Duration;
use std::sync::{Mutex, PoisonError};

/// The error of [`RedisStore::new`]: the `redis` crate's, re-exported so
/// that it can be named without depending on `redis` directly.
pub use redis::RedisError;

// The names the crate docs link to.
#[cfg(doc)]
use backoff_runtime::{AdaptiveThrottle, CircuitBreaker, RetryBudget};

/// The default [`RedisStore::sync_every`].
pub const DEFAULT_SYNC_EVERY: Duration = Duration::from_millis(100);

/// The shortest [`RedisStore::sync_every`]: 1 ms.
pub const MIN_SYNC_EVERY: Duration = Duration::from_millis(1);

/// The longest [`RedisStore::sync_every`]: 1 s (the background thread looks
/// at least this often anyway; a fleet heard from less often would not
/// keep its breakers in step).
pub const MAX_SYNC_EVERY: Duration = Duration::from_secs(1);

/// The default [`RedisStore::command_timeout`]: 1 s, so a Redis a few
/// hundred milliseconds away works without configuration.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(1);

/// The range of [`RedisStore::command_timeout`]: 10 ms to 30 s.
pub const COMMAND_TIMEOUTS: core::ops::RangeInclusive<Duration> =
    Duration::from_millis(10)..=Duration::from_secs(30);

/// The longest host a store's URL may name (a DNS name has at most 253
/// characters).
pub const MAX_HOST_LEN: usize = 253;

/// The databases a store's URL may name: Redis' default configuration has
/// 16 (`databases 16`), numbered 0 to 15.
pub const DATABASES: core::ops::RangeInclusive<i64> = 0..=15;

/// The longest pause between reconnects after failed syncs.
pub(crate) const RECONNECT_CAP: Duration = Duration::from_secs(2);

/// The prefix of every key and channel a store uses.
pub(crate) const PREFIX: &str = "backoff";

mod breaker;
mod budget;
mod store;
mod sync;
mod throttle;

pub use breaker::SharedBreaker;
pub use budget::{DEFAULT_STARTUP_TOKENS, SharedBudget};
pub use store::{Health, RedisStore};
pub use throttle::SharedThrottle;

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// This process's wall clock, in ms since the Unix epoch.
pub(crate) fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, millis)
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
