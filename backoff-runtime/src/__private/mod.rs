//! Support for the code `#[retry]` generates. Not a public API: names and
//! signatures here change without notice.
//!
//! A leaf: no other module of the runtime names it. What the expansion and
//! the runtime's own loops share lives in the crate's `driver` module (and
//! a call's recording in `record`); this module only re-exports it and
//! adds what the expansion alone needs, by role:
//!
//! - `dispatch`: the return type's dispatch to the loops (`RetryResult`),
//!   the default sleep and timer; the traits the expansion checks the
//!   user's values against live in the public [`crate::retry_args`],
//!   re-exported here under the names the expansion gives them;
//! - `policies`: the policies the attribute names by a type (`Fixed`);
//! - `steps`: the cold steps the expansion's loop calls after a failed
//!   attempt, over the driver;
//! - `trace`: the `tracing` glue (feature `tracing`; without it, the
//!   expansion's `tracer!` is `()`).

pub(crate) mod dispatch;
mod policies;
mod steps;
#[cfg(feature = "tracing")]
mod trace;

pub use crate::control::{Budget as AsBudget, Circuit as AsCircuit, Throttle as AsThrottle};
pub use crate::retry_args::{PolicyArgument as AsPolicy, *};
pub use dispatch::*;
pub use policies::*;
pub use steps::*;
#[cfg(feature = "tracing")]
pub use trace::*;

pub use core::result::Result::{self, Err, Ok};
pub use core::{future::Future, ops::ControlFlow, time::Duration};

pub use crate::budget::RetryBudget;
pub use crate::circuit::{CircuitBreaker, CircuitOpen};
pub use crate::clock::Clock;
pub use crate::decision::{Decision, IntoDecision};
pub use crate::driver::{NoTrace, Origin, Trace};
pub use crate::event::{AttemptContext, RetryEvent};
#[cfg(feature = "tokio")]
pub use crate::hedge::{Cancellable, HedgeDelay, Latency, WithContext};
pub use crate::hooks::{Classify, HookSet, NoHook, OnGiveUp, OnRetry, RetryAll};
pub use crate::jitter::Jitter;
pub use crate::kind::Kind;
pub use crate::policy::{OnDeadline, Policy};
pub use crate::record::{AttemptBegan, CallBegan, Recording};
pub use crate::report::{GiveUp, GiveUpReason};
pub use crate::state::{Carried, Previous, RetryState};
pub use crate::strategy::{
    Buckets, Builtin, Chain, Constant, Decorrelated, Exponential, Fibonacci, Immediate, Linear,
    Longer, Shorter, Sidekiq, Stage, Steps, Strategy, Sum,
};
pub use crate::throttle::{AdaptiveThrottle, Rejected};
pub use crate::timeout::Elapsed;

/// The default sleep of a plain fn; a zero delay does not sleep.
pub use crate::sleep::blocking as sleep_blocking;

/// Without the `tracing` feature: `()`, which traces nothing (as
/// [`NoTrace`] does) in the fewest tokens.
#[cfg(not(feature = "tracing"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __backoff_tracer {
    ($($ignored:tt)*) => {
        ()
    };
}

/// The [`Trace`] of a function, as the expansion makes it.
pub use crate::__backoff_tracer as tracer;
