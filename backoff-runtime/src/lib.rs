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
//! - The function keeps its signature exactly: name, visibility, generics,
//!   where-clauses, parameters, return type, `async`, `unsafe`, doc comments
//!   and other attributes. Free functions, inherent and trait methods
//!   (`&self`, `&mut self`, `self: Arc<Self>`), default trait methods,
//!   `async fn` in traits and generic functions all work.
//! - The return type must be a `Result`, directly or through an alias such
//!   as `std::io::Result<T>`; anything else is a compile error.
//! - Each attempt runs the whole body again; `?` and `return` end that
//!   attempt. Arguments are cloned only when `clone(..)` names them (one
//!   clone per attempt): otherwise a body that gives a by-value argument
//!   away does not compile, since a second attempt would have nothing to
//!   give. Each attempt reborrows the `&mut` arguments, and sees `mut` and
//!   `&mut` arguments as the previous attempt left them.
//! - When the call gives up, the caller gets the last error unchanged.
//!   A panic in the body is never retried: it unwinds as usual.
//! - An `async fn`'s future is `Send` whenever the function's would be
//!   without the attribute (the [`retry`](macro@retry) docs name the one
//!   exception), and dropping it mid-sleep cancels cleanly.
//! - A call that succeeds at once builds no retry state, reads no clock
//!   (unless `max_elapsed` or `on_retry` needs the time) and draws no random
//!   number; no path allocates.
//! - A plain fn sleeps with `std::thread::sleep`, an `async fn` with
//!   `tokio::time::sleep`, or with the `sleep = ...` you name.
//! - Every mistake in the attribute is a compile error on the offending
//!   token, all of them at once, and the function is still emitted so the
//!   rest of the crate compiles.
//!
//! # What the runtime guarantees
//!
//! - Each schedule caps its own sleeps, whatever the jitter and the attempt
//!   count: no sleep of the main strategy exceeds its maximum, and none of
//!   a throttled schedule (for [`Decision::Throttled`]) exceeds that
//!   schedule's maximum, which may be larger. A server's
//!   [`Decision::RetryAfter`] is waited exactly, up to the policy's
//!   `Retry-After` limit (a longer one gives up).
//! - All arithmetic saturates: any attempt count up to `u32::MAX`, any
//!   duration up to [`Duration::MAX`](core::time::Duration::MAX), no overflow,
//!   no panic.
//! - No retry loop allocates; a call that succeeds at once reads no clock
//!   (unless a deadline is set) and draws no random number.
//!
//! # Features
//!
//! - `macros` (default): the `#[retry]` attribute.
//! - `tokio` (default): async sleeping and clocks from `tokio::time`.
//! - `std` (default): the retry state machine, loops, clocks and OS-seeded
//!   jitter. Without it the crate is `no_std` and offers the strategies,
//!   [`Jitter`], [`Policy`] and its [`delays`](Policy::delays) schedule.
//! - `http` (off): the `http` module, a server's `Retry-After` (both forms)
//!   and HTTP statuses as [`Decision`]s; implies `std`.
//! - `tracing` (off): each retry of a `#[retry]` function emits a `tracing`
//!   event at WARN (`function`, `attempt`, `delay_ms`, `error` through
//!   `Display`), and giving up one with `attempts` and `reason`, at ERROR
//!   when retrying did not help, WARN for a breaker's refusal or an error
//!   stopped after retries, DEBUG for one stopped on the first attempt;
//!   implies `std`.
//! - `tower` (off): the `tower` module, a `tower::retry::Policy` built
//!   from a [`Policy`], so one policy serves `#[retry]` and a tower
//!   `ServiceBuilder` stack; implies `tokio`.
//!
//! The documentation on docs.rs is built with every feature; an item that
//! needs one that is off by default says so.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod decision;
pub mod jitter;
mod nanos;
pub mod policy;
pub mod strategy;

#[cfg(feature = "std")]
pub mod budget;
#[cfg(feature = "std")]
pub mod circuit;
#[cfg(feature = "std")]
pub mod clock;
#[cfg(feature = "std")]
mod fixed;
#[cfg(feature = "std")]
pub mod hooks;
#[cfg(feature = "http")]
pub mod http;
#[cfg(all(test, loom))]
mod loom;
#[cfg(feature = "std")]
pub mod retry;
#[cfg(feature = "std")]
pub mod sleep;
#[cfg(feature = "std")]
mod sync;
#[cfg(feature = "std")]
pub mod throttle;
#[cfg(feature = "std")]
mod timeout;
#[cfg(feature = "tower")]
pub mod tower;

#[cfg(feature = "std")]
#[doc(hidden)]
pub mod __private;
// The names compile errors give the traits `#[retry]` checks its arguments
// against (see `__private::args`).
#[cfg(feature = "std")]
#[doc(hidden)]
pub use __private::args as retry_args;

#[cfg(feature = "std")]
pub use budget::RetryBudget;
#[cfg(feature = "std")]
pub use circuit::{CircuitBreaker, CircuitOpen, CircuitState};
pub use decision::{AttemptContext, Decision, GiveUp, GiveUpReason, IntoDecision, RetryEvent};
#[cfg(feature = "std")]
pub use hooks::Retrying;
pub use jitter::{Jitter, JitterRng};
pub use policy::{Delays, Policy};
#[cfg(feature = "std")]
pub use retry::RetryState;
pub use strategy::Strategy;
#[cfg(feature = "std")]
pub use throttle::{AdaptiveThrottle, Rejected, ThrottlePermit};
#[cfg(feature = "std")]
pub use timeout::Elapsed;

#[cfg(feature = "macros")]
pub use backoff_macros::retry;
