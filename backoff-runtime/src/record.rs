//! The recording facade: what every retried call, breaker and budget tells a
//! [`Recorder`], once one is installed.
//!
//! Available with the feature `record` (off by default; the crate
//! `backoff-opentelemetry` turns it on, so a program that depends on it
//! adds nothing: cargo unifies the features). Without the feature there is
//! no facade, and a call pays nothing for it: not even the one atomic load
//! below.
//!
//! This crate records nothing by itself. A recorder (your own, or the
//! `backoff-opentelemetry` crate's, which turns each event into
//! OpenTelemetry metrics and spans) is installed once per process with
//! [`set_recorder`], like a `log` logger; from then on every call of
//! `#[retry]`, [`Policy::retry`](crate::Policy::retry),
//! [`retry_async`](crate::Policy::retry_async),
//! [`retrying`](crate::Policy::retrying), the `tower` policy and hedged
//! calls tells it, one method per event:
//!
//! | event | method | what it carries |
//! |---|---|---|
//! | an attempt ended | [`attempt_ended`](Recorder::attempt_ended) | [`AttemptEnded`]: function, [`CallId`], [`AttemptKind`], number, [`AttemptOutcome`], start and end |
//! | a call ended | [`call_ended`](Recorder::call_ended) | [`CallEnded`]: function, [`CallId`], [`CallOutcome`] (with the [`GiveUpReason`]), attempts, duration |
//! | a retry was granted | [`retry_delay`](Recorder::retry_delay) | function, the delay before the next attempt |
//! | a named breaker changed state | [`breaker_state`](Recorder::breaker_state) | its name, the new [`CircuitState`] |
//! | a named budget's tokens changed | [`budget_tokens`](Recorder::budget_tokens) | its name, the tokens left |
//!
//! # Cost
//!
//! While no recorder is installed a call pays one atomic load (and a
//! branch) to find that out, and reads no clock. A call that began while
//! one was installed reads the loop's clock when it begins, when each
//! attempt after the first begins, and when each attempt and the call end.
//! A recorder is installed for the rest of the process. A call checks for
//! it when it begins, so a call already running when it is installed
//! records nothing (but for the attribute's compact `async fn` loop, which
//! checks at each attempt and records from its next attempt on, as a call
//! that began then).
//!
//! # Names
//!
//! `function` is what the call is known by: for `#[retry]`,
//! `module_path!()::name`, fixed at compile time; for
//! [`Policy::retry`](crate::Policy::retry), `retry_async`, `retrying` and
//! the `tower` policy, the policy's [`named`](crate::Policy::named) (or
//! `"unnamed"`). Breakers and budgets report their state only when
//! [`named`](crate::CircuitBreaker::named): unnamed ones would share one
//! series.
//!
//! # Example
//!
//! A recorder that counts attempts and calls:
//!
// (Run only with the feature: without it this module is private.)
#![cfg_attr(feature = "record", doc = "```")]
#![cfg_attr(not(feature = "record"), doc = "```ignore")]
//! use backoff_runtime::record::{self, AttemptEnded, AttemptOutcome, CallEnded, Recorder};
//! use backoff_runtime::retry;
//! use std::sync::atomic::{AtomicU32, Ordering};
//!
//! struct Counts {
//!     failed: AtomicU32,
//!     calls: AtomicU32,
//! }
//!
//! impl Recorder for Counts {
//!     fn attempt_ended(&self, attempt: &AttemptEnded) {
//!         if attempt.outcome != AttemptOutcome::Ok {
//!             self.failed.fetch_add(1, Ordering::Relaxed);
//!         }
//!     }
//!     fn call_ended(&self, call: &CallEnded) {
//!         assert!(call.function.ends_with("::flaky")); // module_path!()::flaky
//!         assert_eq!(call.attempts, 3);
//!         self.calls.fetch_add(1, Ordering::Relaxed);
//!     }
//! }
//!
//! static COUNTS: Counts = Counts { failed: AtomicU32::new(0), calls: AtomicU32::new(0) };
//!
//! #[retry(immediate, attempts = 5)]
//! fn flaky(tries: &mut u32) -> Result<u32, &'static str> {
//!     *tries += 1;
//!     if *tries < 3 { Err("busy") } else { Ok(*tries) }
//! }
//!
//! record::set_recorder(&COUNTS).expect("the first recorder");
//! assert_eq!(flaky(&mut 0), Ok(3));
//! assert_eq!(COUNTS.failed.load(Ordering::Relaxed), 2);
//! assert_eq!(COUNTS.calls.load(Ordering::Relaxed), 1);
//! ```
//!
//! # Inside the crate
//!
//! The module is also, with the feature or without it, what the loops
//! (and the attribute's expansion, through `__private`) keep of a call to
//! tell the recorder: `call`'s `Recording` and the compact loop's
//! `CallBegan` and `AttemptBegan`, zero-sized without the feature (every
//! method empty, no flag loaded), and `live`, the clock reads and events
//! of a call that records.

pub(crate) mod call;
#[cfg(feature = "record")]
mod facade;
#[cfg(feature = "record")]
mod live;

pub(crate) use call::*;
#[cfg(feature = "record")]
pub use facade::*;

/// Never a recorder without the feature `record`: every test of `on`
/// folds away.
#[cfg(not(feature = "record"))]
#[inline(always)]
pub(crate) const fn on() -> bool {
    false
}

/// Never called without the feature `record` (see [`on`]).
#[cfg(not(feature = "record"))]
#[inline(always)]
pub(crate) fn breaker_state(_: &'static str, _: crate::CircuitState) {}

/// Never called without the feature `record` (see [`on`]).
#[cfg(not(feature = "record"))]
#[inline(always)]
pub(crate) fn budget_tokens(_: &'static str, _: f64) {}
