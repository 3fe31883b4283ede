//! Support for the code `#[retry]` generates. Not a public API: names and
//! signatures here change without notice.
//!
//! A leaf: no other module of the runtime names it. What the expansion and
//! the runtime's own loops share lives in the crate's `driver` module (and
//! a call's recording in `record`); this module only re-exports it and
//! adds what the expansion alone needs, by role:
//!
//! - `checks`: the traits the expansion checks the user's values against,
//!   each with a `#[diagnostic::on_unimplemented]` message in `#[retry]`'s
//!   terms (re-exported under readable names as `args`);
//! - `policies`: the policies the attribute names by a type (`Fixed`);
//! - `steps`: the cold steps the expansion's loop calls after a failed
//!   attempt, over the driver;
//! - `trace`: the `tracing` glue (macros that expand to nothing without the
//!   feature).

mod chaos;
mod checks;
mod policies;
mod steps;
mod trace;

pub use chaos::*;
pub use checks::*;
pub use policies::*;
pub use steps::*;
pub use trace::*;

pub use core::future::Future;
pub use core::ops::ControlFlow;
pub use core::result::Result;
pub use core::result::Result::{Err, Ok};
pub use core::time::Duration;

pub use crate::budget::RetryBudget;
pub use crate::circuit::{CircuitBreaker, CircuitOpen};
pub use crate::clock::Clock;
pub use crate::decision::{Decision, IntoDecision};
pub use crate::driver::{NoTrace, Origin, Trace};
pub use crate::event::{AttemptContext, RetryEvent};
#[cfg(feature = "tokio")]
pub use crate::hedge::{HedgeDelay, Latency};
pub use crate::hooks::{Classify, HookSet, NoHook, OnGiveUp, OnRetry, RetryAll};
pub use crate::jitter::Jitter;
pub use crate::kind::Kind;
pub use crate::policy::{OnDeadline, Policy};
pub use crate::record::call::{AttemptBegan, CallBegan, Recording};
pub use crate::report::{GiveUp, GiveUpReason};
pub use crate::state::{Capped, Carried, Previous, RetryState};
pub use crate::strategy::{
    Buckets, Builtin, Chain, Constant, Decorrelated, Exponential, Fibonacci, Immediate, Linear,
    Longer, Shorter, Sidekiq, Steps, Strategy, Sum,
};
pub use crate::throttle::{AdaptiveThrottle, Rejected};
pub use crate::timeout::Elapsed;

/// The default sleep of a plain fn; a zero delay does not sleep.
pub use crate::sleep::blocking as sleep_blocking;

/// The traits `#[retry]` checks its arguments against, under the names a
/// compile error gives them.
///
/// When a value given to the attribute has the wrong type (a `when` that
/// takes `&String` where the error is `u32`, a `sleep` that returns a
/// value), the compiler's message is the attribute's own (`#[retry]:
/// `when` must take `&E`...`), and its `help:` line names one of these
/// traits: each is named after the argument and what it checks
/// (`WhenParameter`, `OnRetryFn`, `SleepParameter`, `FromElapsed`, ...).
/// You never implement or name them: they are implemented for exactly the
/// values the attribute accepts, and their documentation says which.
///
/// ```compile_fail
/// use backoff_runtime::retry;
///
/// // `when` takes `&E`, here `&u32`: the help line names `WhenParameter`.
/// #[retry(when = |e: &String| e.is_empty())]
/// fn f() -> Result<(), u32> { Err(1) }
/// ```
pub mod args {
    pub use super::chaos::{ChaosFeature, ChaosInjection};
    pub use super::checks::{
        AsBudget as BudgetArgument, AsCircuit as CircuitArgument, AsPolicy as PolicyArgument,
        AsThrottle as ThrottleArgument, AsyncSleep as DefaultAsyncSleep, AsyncSleepReturn,
        AsyncTimeout as TimeoutTimer, BlockingSleepReturn, DefaultSleep as TokioFeature,
        FallbackFn, FromCircuitOpen, FromElapsed, FromRejected, KeptAcrossCalls, OnGiveUpFn,
        OnGiveUpParameter, OnGiveUpRecordParameter, OnGiveUpReturn, OnRetryEventParameter,
        OnRetryFn, OnRetryOutcomeParameter, OnRetryParameter, OnRetryReturn,
        RetryResult as ReturnsResult, ReturnedValue, SleepFn, SleepParameter, WhenClassification,
        WhenFn, WhenOkFn, WhenOkParameter, WhenOkReturn, WhenParameter,
    };
}
