//! Retry with exponential backoff and jitter, declared in one line.
//!
//! ```
//! use backoff_runtime::retry;
//! # #[derive(Debug)] struct FetchError { transient: bool }
//! # fn is_transient(e: &FetchError) -> bool { e.transient }
//! # async fn get(_: &str) -> Result<String, FetchError> { Ok(String::new()) }
//!
//! #[retry(exponential(base = "100ms", max = "5s"), attempts = 5, jitter = "full", when = is_transient)]
//! async fn fetch(url: &str) -> Result<String, FetchError> {
//!     get(url).await
//! }
//! # #[tokio::main(flavor = "current_thread")] async fn main() { fetch("x").await.unwrap(); }
//! ```
//!
//! `#[retry]` turns a sync or `async fn` returning `Result` into a retry
//! loop; every argument is checked when the code compiles. See the
//! [`retry`](macro@retry) attribute for the grammar.
//!
//! The attribute is thin syntax over this crate, which is useful by itself:
//! a [`Policy`] (strategy, [`Jitter`], attempt limit, deadline) gives the
//! schedule ([`Policy::delays`]), runs loops ([`Policy::retry`],
//! [`Policy::retry_async`]), or hands you the state machine
//! ([`Policy::start`], [`RetryState`]) for a loop you write yourself.
//!
//! ```
//! use backoff_runtime::{Jitter, Policy};
//! use std::time::Duration;
//!
//! let policy = Policy::exponential(Duration::from_millis(100))
//!     .factor(2.0)
//!     .max_delay(Duration::from_secs(5))
//!     .jitter(Jitter::Full)
//!     .attempts(5)
//!     .max_elapsed(Duration::from_secs(30));
//!
//! let delays: Vec<Duration> = policy.delays().collect();
//! assert_eq!(delays.len(), 4);
//! assert!(delays.iter().all(|d| *d <= Duration::from_secs(5)));
//! # fn call_service() -> Result<u32, std::io::Error> { Ok(1) }
//! let value = policy.retry(|| call_service());
//! # assert_eq!(value.unwrap(), 1);
//! ```
//!
//! # Methods and `&mut` arguments
//!
//! Each attempt reborrows the arguments, so `&mut self` methods and `&mut`
//! arguments (a database connection, a transaction, a buffer) work as they
//! are, and each attempt sees them as the previous attempt left them:
//!
//! ```
//! use backoff_runtime::retry;
//!
//! struct Connection {
//!     calls: u32,
//! }
//!
//! impl Connection {
//!     /// Fails twice, then answers.
//!     #[retry(immediate, attempts = 5)]
//!     fn query(&mut self, sql: &str) -> Result<String, String> {
//!         self.calls += 1;
//!         if self.calls < 3 {
//!             return Err(format!("{sql}: connection reset"));
//!         }
//!         Ok(format!("{sql}: 1 row"))
//!     }
//! }
//!
//! let mut connection = Connection { calls: 0 };
//! assert_eq!(connection.query("SELECT 1").unwrap(), "SELECT 1: 1 row");
//! assert_eq!(connection.calls, 3);
//! ```
//!
//! A closure-based retry helper cannot do this: a closure called once per
//! attempt may not hand out the `&mut` borrow it captured ("captured
//! variable cannot escape `FnMut` closure body"). `#[retry]` writes the loop
//! in the function itself, so the borrow checker sees one borrow per
//! attempt.
//!
//! # What `#[retry]` guarantees
//!
//! This is the one list of what the attribute promises; the README and the
//! [`retry`](macro@retry) docs point here.
//!
//! - **The function keeps its signature** exactly: name, visibility,
//!   generics, where-clauses, parameters, return type, `async`, `unsafe`,
//!   doc comments and other attributes. Free functions, inherent and trait
//!   impl methods (`&self`, `&mut self`, `self: Arc<Self>`), trait methods
//!   with a default body, `async fn` in traits, generic functions and
//!   `impl Trait` arguments all work.
//! - **The return type is a `Result`**, directly or through an alias such as
//!   `std::io::Result<T>` or `anyhow::Result<T>`, and `impl Trait` may
//!   appear inside it (`Result<impl Iterator<Item = u32>, E>`); anything
//!   else is a compile error that names `#[retry]`.
//! - **Each attempt runs the whole body again**; `?` and `return` end that
//!   attempt with their result. Arguments are cloned only when `clone(..)`
//!   names them (one clone per attempt that runs): otherwise a body that
//!   gives a by-value argument away is a compile error, since a second
//!   attempt would have nothing to give. Each `&mut` argument bound by name,
//!   with an elided lifetime, is reborrowed by each attempt, so the body may
//!   re-point it (`dst = &mut dst[..n]`) and the next attempt starts from
//!   the caller's reference. Each attempt sees `mut` and `&mut` arguments as
//!   the previous attempt left them: a body that is not safe to run twice
//!   is yours to make so.
//! - **The caller gets the last outcome unchanged** when the call gives up:
//!   the last error, or the last `Ok` that `when_ok` rejected. The
//!   exceptions are the library's own errors: a `timeout` that passes
//!   returns `E::from(Elapsed)`, an attempt an open `circuit` refuses
//!   returns `E::from(CircuitOpen)`, and a call whose `cancel` token was
//!   cancelled before its first attempt returns `E::from(Cancelled)`
//!   (cancelled later, it returns its last outcome). A call gives up because `when` or
//!   `when_ok` said stop, the attempts ran out, the next sleep would end
//!   past `max_elapsed`, a server's `RetryAfter` asked for more than
//!   `retry_after_max`, the budget or the breaker refused, `timeout`
//!   passed, or the `cancel` token was cancelled; `on_giveup` is told which
//!   ([`GiveUpReason`]). A panic in the
//!   body is never retried: it unwinds as usual.
//! - **An `async fn`'s future is `Send`** whenever the function's would be
//!   without the attribute, with one exception that the
//!   [`retry`](macro@retry) docs describe (an argument that is `Send` but
//!   not `Sync`, held by value or by an un-reborrowed `&mut`, that the body
//!   only reads). A failed attempt's error is dropped before the sleep, so
//!   the future never holds it across an await, and dropping the future
//!   mid-sleep cancels cleanly.
//! - **Success is free.** Without `max_elapsed` (given directly or in the
//!   [`Policy`] of `policy = ...`), `on_retry`, `on_giveup`, `on_success`,
//!   `reset_after`, `timeout` and `attempt_timeout`, a call that succeeds at
//!   once reads no clock (a closed
//!   breaker included) and draws no random number. It builds no retry state
//!   either, unless a `circuit` is named (the breaker admits the first
//!   attempt through it). No path allocates.
//! - **Sleeps are bounded** as the runtime's guarantees below say: a sleep
//!   from the strategy never exceeds the strategy's `max`, and a server's
//!   `RetryAfter` is waited exactly, up to `retry_after_max`.
//! - **Sleeping**: a plain fn sleeps with `std::thread::sleep`, an
//!   `async fn` with `tokio::time::sleep`, or either with the `sleep = ...`
//!   you name; an `async fn` with neither the `tokio` feature nor `sleep` is
//!   a compile error naming both fixes. With a `cancel` token a plain fn
//!   waits on the token instead, and an `async fn`'s sleep races it, so a
//!   cancel ends the sleep at once (see [`CancelToken`]).
//! - **Lints keep working**: the expansion adds no warning and hides none,
//!   and uses nothing newer than Rust 1.85: the function's own lints
//!   (`missing_docs`, `unused_mut`, `clippy::needless_return`,
//!   `clippy::missing_safety_doc`, `clippy::result_large_err`) fire as they
//!   would without the attribute, but for three, each hidden for a reason
//!   the guide gives (a large error on a closure inside a plain fn,
//!   `clippy::doc_lazy_continuation`, the pedantic
//!   `clippy::unnecessary_wraps`).
//! - **Mistakes are compile errors** on the offending token, all of them at
//!   once, never naming the runtime's hidden items, and the function is
//!   still emitted so the rest of the crate type-checks.
//!
//! # What the runtime guarantees
//!
//! These hold for the attribute and for every loop of this crate
//! ([`Policy::retry`], [`Policy::retry_async`], [`Retrying`], a
//! hand-driven [`RetryState`]):
//!
//! - **Each schedule has its own bound.** A sleep from the strategy never
//!   exceeds that strategy's maximum (its `max`, its
//!   [`Strategy::max_delay`]), whatever the jitter and the attempt count.
//!   `constant(D)` has no maximum unless one is set, so `scattered(R)` may
//!   reach D · (1 + R) there. The `throttled(..)` schedule is bound by its
//!   own strategy's `max`, not the main one's, and counts its own
//!   failures against its own `attempts`: it is a kind, as an `on(..)`
//!   arm's schedule. A server's
//!   [`Decision::RetryAfter`] is not a strategy's delay: it is waited
//!   exactly, past any `max`, unless it is longer than `retry_after_max`
//!   (five minutes unless set), when the call gives up at once instead of
//!   sleeping; `attempts` and `max_elapsed` still bound it.
//! - **All arithmetic saturates**: any attempt count up to `u32::MAX`, any
//!   duration up to [`Duration::MAX`](core::time::Duration::MAX), no
//!   overflow, no panic. Invalid builder input is ignored as documented on
//!   each setter (a factor that is not finite or not above 1 keeps the
//!   previous one; `attempts(0)` means 1).
//! - **No retry loop allocates** (a [`CancelToken`] keeps the wakers of
//!   the tasks waiting on it in a list that grows to the most that waited
//!   at once).
//! - **The time left** until a call's deadline (the nearer of `timeout`
//!   and `max_elapsed`) is what [`AttemptContext::remaining`] and
//!   [`RetryEvent::remaining`] say, and what `attempt_timeout` is cut to:
//!   no attempt outlives its call's deadline, but the last try that
//!   [`OnDeadline::LastTry`] grants at the deadline, which reads zero and
//!   keeps its whole `attempt_timeout`.
//! - **A long attempt starts a new run** under
//!   [`Policy::reset_after`]: its failure is the run's first, for the
//!   schedule, every attempt limit and `max_elapsed`; the call's attempt
//!   count, its report and `timeout` still span every run.
//! - **`on_success` is told once**, of an `Ok` the call accepted, and never
//!   of a call that gave up ([`SuccessEvent`]).
//! - **A call that succeeds at once reads no clock** and draws no random
//!   number, unless the policy has a `max_elapsed` or a `reset_after`, or
//!   the call was given an `on_retry`, an `on_giveup`, an `on_success` or a
//!   `timeout` (which need the time), or was
//!   started with [`Policy::start`], which is timed. A closed
//!   [`CircuitBreaker`] reads no clock; a [`RetryBudget`] never does.
//!   (With the feature `record`, while a recorder is installed, a call
//!   reads the clock to time itself and its attempts for it;
//!   `backoff-opentelemetry`'s recorder also allocates each attempt's
//!   span's attributes.)
//! - **Without the feature `record` (the default), nothing is recorded and
//!   nothing is paid for it**: no flag is loaded, and the loops, the
//!   attribute's expansion and their futures are what they would be
//!   without the recording facade. With it, a call while no recorder is
//!   installed pays one atomic load (and its branch), and reads no clock.
//!
//! # Another crate's error type
//!
//! `circuit`, `timeout` and `attempt_timeout` fail a call with
//! `E::from(CircuitOpen)` or `E::from(Elapsed)`. `std::io::Error` has both
//! impls; for another crate's error type (`redis::RedisError`,
//! `tonic::Status`) return [`Error<E>`](Error) instead, with no error enum
//! of your own: `?` still converts the client's errors, and the refusals
//! are [`Error::CircuitOpen`] and [`Error::Elapsed`].
//!
//! # Hooks
//!
//! Every call that takes hooks speaks one vocabulary, the [`hooks`]
//! module's: `when` and `when_ok` are a [`hooks::Classify`] (defaults
//! [`hooks::RetryAll`], [`hooks::AcceptAll`]), `on_retry` an
//! [`hooks::OnRetry`] (`FnMut(&Result<T, E>, &RetryEvent)`, told of each
//! failed attempt that is retried), `on_giveup` an [`hooks::OnGiveUp`],
//! `fallback` a [`hooks::Fallback`], and a hedged call's `on_hedge` an
//! [`hooks::OnHedge`] (`FnMut(&RetryEvent)`, told of each attempt the hedge
//! delay started); [`hooks::NoHook`] is the default of each. [`Retrying`]
//! and [`Hedge`] (feature `tokio`) take them by the
//! same names, and keep them in one [`hooks::HookSet`].
//!
//! ```
//! use backoff_runtime::{Policy, RetryEvent};
//!
//! let (mut calls, mut retried) = (0, Vec::new());
//! let result: Result<u32, &str> = Policy::immediate()
//!     .attempts(3)
//!     .retrying(|| { calls += 1; if calls < 3 { Err("busy") } else { Ok(7) } })
//!     .on_retry(|outcome: &Result<u32, &str>, e: &RetryEvent| retried.push((*outcome, e.attempt)))
//!     .call();
//! assert_eq!(result, Ok(7));
//! assert_eq!(retried, [(Err("busy"), 1), (Err("busy"), 2)]);
//! ```
//!
//! # Your own controls, and fleets
//!
//! `circuit`, `budget` and `throttle` (in the attribute, in [`Retrying`]
//! and in hedged calls) accept any [`control::Circuit`],
//! [`control::Budget`] or [`control::Throttle`]: the core's
//! [`CircuitBreaker`], [`RetryBudget`] and [`AdaptiveThrottle`], a
//! reference, `Box`, `Arc` or `LazyLock` of one, or a type of yours that
//! lends one. The crate `backoff-redis` shares them across the processes
//! of a fleet through Redis (`backoff_redis::{RedisStore, SharedBreaker,
//! SharedBudget, SharedThrottle}`), through one public extension point
//! per control ([`circuit::RemoteView`], [`budget::RemoteView`],
//! [`throttle::RemoteView`]), which a coordinator of your own may use the
//! same way.
//!
//! # Job systems
//!
//! A job queue that stores only each job's attempt count asks
//! [`Policy::delay_for`] for the delay before its next run: stateless and
//! deterministic in `(retry, key)`, `None` after the last attempt. With
//! [`Jitter::Spread`] a herd of jobs that failed together retries evenly
//! over time, without idle gaps, while each job's waits stay close to the
//! strategy's and never shrink:
//!
//! ```
//! use backoff_runtime::{Jitter, Policy, strategy::Sidekiq};
//!
//! let policy = Policy::from_strategy(Sidekiq::new()).jitter(Jitter::Spread).attempts(26);
//! let job_id = 7;
//! let waits: Vec<_> = (1..).map_while(|k| policy.delay_for(k, job_id)).collect();
//! assert_eq!(waits.len(), 25);
//! assert!(waits.windows(2).all(|w| w[0] <= w[1]));
//! ```
//!
//! # Metrics and traces
//!
//! With the feature `record`, every retried call, named breaker and named
//! budget tells the recorder (`record::Recorder`) installed with
//! `record::set_recorder` what happened: each attempt that ended, each call
//! that ended, each retry's delay, each breaker's state and each budget's
//! tokens (see the `record` module, available with the feature `record`).
//! The crate `backoff-opentelemetry`, beside this one, is such a recorder:
//! `backoff_opentelemetry::install()` records OpenTelemetry metrics (meter
//! `backoff`) and a span per attempt through the global providers. It
//! turns `record` on itself: a program that depends on it adds nothing
//! (cargo unifies the features of this crate across the dependency graph,
//! so every `#[retry]` in the program records). While no recorder is
//! installed a call pays one atomic load and reads no clock; without the
//! feature it pays nothing.
//!
//! # Features
//!
//! - `macros` (default): the `#[retry]` attribute.
//! - `tokio` (default): async sleeping and clocks from `tokio::time`, and
//!   hedged calls ([`Hedge`]: gRPC A6 hedging, a learned p95).
//! - `std` (default): the retry state machine, loops, clocks and OS-seeded
//!   jitter. Without it the crate is `no_std` and offers the strategies,
//!   [`Jitter`], [`Policy`] and its [`delays`](Policy::delays) schedule.
//! - `http` (off): the `http` module, a server's `Retry-After` (both forms)
//!   and HTTP statuses as [`Decision`]s; implies `std`.
//! - `tracing` (off): each retry of a `#[retry]` function emits a `tracing`
//!   event at WARN (`function`, `attempt`, `delay_ms`, `error` through
//!   `Display`), and giving up one with `attempts` and `reason`, at ERROR
//!   when retrying did not help, WARN for a breaker's refusal, a `cancel`
//!   or an error stopped after retries, DEBUG for one stopped on the first attempt
//!   (an error type without `Display` compiles too, and its events say
//!   "(an error without `Display`)"); implies `std`.
//! - `tower` (off): the `tower` module, a `tower::retry::Policy` built
//!   from a [`Policy`], so one policy serves `#[retry]` and a tower
//!   `ServiceBuilder` stack; implies `tokio`.
//! - `record` (off): the `record` module, the recording facade (a
//!   `Recorder` installed once per process is told of every call, attempt,
//!   named breaker and named budget); turned on by `backoff-opentelemetry`
//!   (a program that depends on it adds nothing); implies `std`. Without
//!   it no call loads the facade's flag.
//! - `grpc` (off): the `grpc` module, a `tonic::Status` as a [`Decision`]
//!   by gRPC's retry design (`UNAVAILABLE`, `RESOURCE_EXHAUSTED`, the
//!   server's `grpc-retry-pushback-ms`); tonic without its default features
//!   (no transport, no `protoc`); implies `std`.
//! - `tokio-util` (off): [`control::Cancel`] for
//!   `tokio_util::sync::CancellationToken`, so a service's own token can be
//!   the attribute's `cancel = ..`; implies `std`.
//! - `chaos` (off; for `[dev-dependencies]`): the `chaos` module,
//!   `Chaos` and the attribute's `chaos = CHAOS`,
//!   seeded faults and latency injected into each attempt before its body,
//!   to see a breaker, a budget, hedging and timeouts act in tests;
//!   implies `tokio`.
//!
//! The documentation on docs.rs is built with every feature; an item that
//! needs one that is off by default says so.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
// docs.rs (nightly, `--cfg docsrs`): each item gated by a feature says so.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]
// The docs describe the default features' items (the attribute, the async
// loops, `Retrying::timeout`); built without them, those links have no target.
#![cfg_attr(
    not(all(feature = "macros", feature = "tokio")),
    allow(rustdoc::broken_intra_doc_links, rustdoc::private_intra_doc_links)
)]

mod decision;
mod event;
pub mod jitter;
mod jobs;
mod kind;
mod nanos;
mod policy;
pub mod presets;
mod report;
pub mod strategy;

#[cfg(feature = "chaos")]
mod chaos;
#[cfg(feature = "grpc")]
pub mod grpc;
#[cfg(feature = "tokio")]
mod hedge;
#[cfg(feature = "http")]
pub mod http;
#[cfg(all(test, loom))]
mod loom;
#[cfg(feature = "record")]
pub mod record;
/// The recording facade without the feature `record` (see its module):
/// what a call keeps to record, zero-sized, and no recorder.
#[cfg(all(feature = "std", not(feature = "record")))]
mod record;
#[cfg(feature = "tower")]
pub mod tower;

// (Outside `with_std!`: a macro it exports would be macro-expanded.)
#[cfg(feature = "std")]
#[doc(hidden)]
pub mod __private;

/// Each item only with the feature `std`.
macro_rules! with_std {
    ($($item:item)*) => {
        $(#[cfg(feature = "std")] $item)*
    };
}

with_std! {
    /// The error type `$ty` of a control's refusal or of a timeout: `Display`
    /// as `$message`, `std::error::Error`, and, so that `io::Result` functions
    /// can use the argument directly, an `std::io::Error` of kind `$kind` whose
    /// source is the value (the docs given go on that conversion).
    macro_rules! control_error {
        ($(#[$doc:meta])* $ty:ident: $message:literal, $kind:ident) => {
            impl core::fmt::Display for $ty {
                fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str($message)
                }
            }

            impl std::error::Error for $ty {}

            $(#[$doc])*
            impl From<$ty> for std::io::Error {
                fn from(e: $ty) -> Self {
                    std::io::Error::new(std::io::ErrorKind::$kind, e)
                }
            }
        };
    }
    pub(crate) use control_error;

    /// `Debug` for the `dyn Remote` of a control's fleet (its name only), so
    /// that the control that holds one derives `Debug`.
    macro_rules! remote_debug {
        () => {
            impl core::fmt::Debug for dyn Remote {
                fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str("Remote")
                }
            }
        };
    }
    pub(crate) use remote_debug;

    pub mod budget;
    mod cancel;
    pub mod circuit;
    #[doc(hidden)]
    pub mod clock;
    pub mod control;
    mod driver;
    mod error;
    pub mod hooks;
    mod loops;
    mod parse;
    mod retrying;
    mod sleep;
    mod state;
    mod sync;
    pub mod throttle;
    mod timeout;
    pub mod retry_args;

    pub use budget::RetryBudget;
    pub use cancel::{CancelToken, Cancelled};
    pub use circuit::{CircuitBreaker, CircuitOpen, CircuitState};
    pub use error::{Error, ForeignError};
    pub use parse::{DynPolicy, ParseError};
    pub use retrying::Retrying;
    pub use state::RetryState;
    pub use throttle::{AdaptiveThrottle, Rejected, ThrottlePermit};
    pub use timeout::Elapsed;
}

#[cfg(feature = "chaos")]
pub use chaos::Chaos;
pub use decision::{Decision, IntoDecision};
pub use event::{AttemptContext, AttemptKind, RetryEvent, SuccessEvent};
#[cfg(feature = "tokio")]
pub use hedge::{Hedge, HedgeDelay, Latency};
pub use jitter::{Jitter, JitterRng};
pub use kind::Kind;
pub use policy::{OnDeadline, Policy};
pub use report::{GiveUp, GiveUpReason};
pub use strategy::Strategy;

#[cfg(feature = "macros")]
pub use backoff_macros::retry;
