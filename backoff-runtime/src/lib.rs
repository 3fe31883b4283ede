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
//! # Guarantees
//!
//! - No sleep exceeds the strategy's maximum, whatever the jitter and the
//!   attempt count (a server's [`Decision::RetryAfter`] excepted, which is
//!   waited exactly).
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
//! - `http` (off): `backoff_runtime::http`, a server's `Retry-After` (both
//!   forms) and HTTP statuses as [`Decision`]s; implies `std`.
//! - `tower` (off): `backoff_runtime::tower`, a `tower::retry::Policy` built
//!   from a [`Policy`], so one policy serves `#[retry]` and a tower
//!   `ServiceBuilder` stack; implies `tokio`.
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
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "std")]
pub mod retry;
#[cfg(feature = "std")]
pub mod sleep;
#[cfg(feature = "std")]
mod timeout;
#[cfg(feature = "tower")]
pub mod tower;

#[cfg(feature = "std")]
#[doc(hidden)]
pub mod __private;

#[cfg(feature = "std")]
pub use budget::RetryBudget;
#[cfg(feature = "std")]
pub use circuit::{CircuitBreaker, CircuitOpen, CircuitState};
pub use decision::{AttemptContext, Decision, GiveUp, GiveUpReason, IntoDecision, RetryEvent};
pub use jitter::{Jitter, JitterRng};
pub use policy::{Delays, Policy};
#[cfg(feature = "std")]
pub use retry::RetryState;
pub use strategy::Strategy;
#[cfg(feature = "std")]
pub use timeout::Elapsed;

#[cfg(feature = "macros")]
pub use backoff_macros::retry;
