//! What the expansion runs a call through: the return type's dispatch to
//! the runtime's loops (`RetryResult`), the default sleep and timer of an
//! `async fn`, and the check that a control named by a path is a `static`.
//!
//! The traits here are reported under the names [`crate::retry_args`]
//! gives them (`ReturnsResult`, `DefaultAsyncSleep`, `TimeoutTimer`); this
//! module names nothing of that one.

use core::future::Future;
use core::time::Duration;

#[cfg(feature = "tokio")]
use super::steps::DefaultSleeping;
#[cfg(feature = "tracing")]
use super::trace::Traced;
use crate::decision::Decision;
use crate::driver::{Origin, Trace};
use crate::strategy::Strategy;
use crate::timeout::Elapsed;

/// The return type of a function under `#[retry]`: a `Result`, possibly
/// behind an alias.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` needs a function that returns `Result`, but this one returns `{Self}`",
    label = "not a `Result`",
    note = "`#[retry]` retries on `Err`; wrap the value in `Result<{Self}, E>` or return an alias such as `std::io::Result<T>`"
)]
pub trait RetryResult: Sized {
    /// The success type.
    type Ok;
    /// The error type.
    type Err;
    /// Splits the outcome.
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
    /// Rebuilds the outcome.
    fn from_result(r: Result<Self::Ok, Self::Err>) -> Self;
    /// The blocking loop of a plain fn under `#[retry]`, from `start` (its
    /// policy and clock: a `Fixed::<..>::ORIGIN` or the `start` the
    /// function builds, for a deadline or a start time): `op` is the body,
    /// returning the function's own type, `FnMut` so that the loop can live
    /// out of line. The first attempt runs here, inline; the rest, the retry
    /// state and the sleeps, out of line, so that a call that succeeds at
    /// once pays only for its test of the outcome. The call is recorded for
    /// the installed recorder as `function` (the expansion's
    /// `concat!(module_path!(), "::", name)`).
    ///
    /// (A method of this trait, not a function bounded by it: a return type
    /// that is not a `Result` is then reported once, at the expansion's
    /// call, spanned on that type, and never as a bound of the runtime's.)
    fn retry_blocking<S: Strategy>(
        start: &Origin<'_, S>,
        function: &'static str,
        trace: impl Trace<Self::Err>,
        op: impl FnMut() -> Self,
    ) -> Self;
    /// [`retry_blocking`](Self::retry_blocking) with `when`, the verdict on
    /// each error: a plain fn whose only hook is a `when` that borrows
    /// nothing of the function's (a path to a function, or a closure that
    /// names no parameter), so that it can live beside the attempts for the
    /// whole loop. Every attempt runs behind a pointer (the body is
    /// compiled once).
    fn retry_blocking_when<S: Strategy>(
        start: &Origin<'_, S>,
        function: &'static str,
        trace: impl Trace<Self::Err>,
        when: impl FnMut(&Self::Err) -> Decision,
        op: impl FnMut() -> Self,
    ) -> Self;
    /// The [`Trace`] of a function named `name` whose attempts are
    /// `attempts`, showing an error with `show`.
    #[cfg(feature = "tracing")]
    fn traced(
        name: &'static str,
        attempts: &impl FnMut() -> Self,
        show: for<'a> fn(&'a Self::Err) -> &'a dyn core::fmt::Display,
    ) -> Traced<Self::Err>;
}

#[diagnostic::do_not_recommend]
impl<T, E> RetryResult for Result<T, E> {
    type Ok = T;
    type Err = E;
    #[inline]
    fn into_result(self) -> Result<T, E> {
        self
    }
    #[inline]
    fn from_result(r: Result<T, E>) -> Self {
        r
    }
    #[inline(always)]
    fn retry_blocking<S: Strategy>(
        start: &Origin<'_, S>,
        function: &'static str,
        trace: impl Trace<E>,
        op: impl FnMut() -> Self,
    ) -> Self {
        crate::loops::blocking(start, Some(function), trace, crate::hooks::RetryAll, op)
    }
    #[inline(always)]
    fn retry_blocking_when<S: Strategy>(
        start: &Origin<'_, S>,
        function: &'static str,
        trace: impl Trace<E>,
        when: impl FnMut(&E) -> Decision,
        op: impl FnMut() -> Self,
    ) -> Self {
        crate::loops::blocking(start, Some(function), trace, when, op)
    }
    #[cfg(feature = "tracing")]
    #[inline(always)]
    fn traced(
        name: &'static str,
        attempts: &impl FnMut() -> Self,
        show: for<'a> fn(&'a E) -> &'a dyn core::fmt::Display,
    ) -> Traced<E> {
        let _ = attempts;
        Traced { name, show }
    }
}

/// The error type of `R`.
pub type ErrorOf<R> = <R as RetryResult>::Err;

/// The success type of `R`.
pub type OkOf<R> = <R as RetryResult>::Ok;

/// `R` as the `Result` the hooks see (`on_giveup`, and `on_retry` with
/// `when_ok`): one alias, so that a closure's parameter type reads as one
/// simple path to lints (`clippy::type_complexity` weighs the written form).
pub type OutcomeOf<R> = Result<OkOf<R>, ErrorOf<R>>;

/// The default sleep of an `async fn`.
pub struct DefaultSleep;

/// An async sleep the attribute can use by default.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` on an `async fn` needs a way to sleep",
    label = "no default async sleep",
    note = "enable the `tokio` feature of `backoff-runtime`, or pass `sleep = path::to::async_sleep` (a `fn(Duration) -> impl Future<Output = ()>`)"
)]
pub trait AsyncSleep {
    /// Sleeps for `d`, which is not zero (the loop skips zero sleeps itself,
    /// so the future holds nothing but the timer: a timer that may be
    /// absent costs 26 instructions per retry, measured).
    fn sleep(d: Duration) -> impl Future<Output = ()> + Send;
}

#[cfg(feature = "tokio")]
impl AsyncSleep for DefaultSleep {
    #[inline]
    fn sleep(d: Duration) -> impl Future<Output = ()> + Send {
        DefaultSleeping {
            sleep: ::tokio::time::sleep(d),
        }
    }
}

/// A `budget` or `circuit` named by a `static`'s path: it must be a
/// `static` (a `const` would be a new one for each call).
#[inline]
pub fn must_be_static<T: ?Sized>(value: &'static T) -> &'static T {
    value
}

/// Runs an attempt under `attempt_timeout`, or the whole call under
/// `timeout`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `timeout` and `attempt_timeout` need the `tokio` feature of `backoff-runtime`",
    label = "no timer without the `tokio` feature"
)]
pub trait AsyncTimeout {
    /// `f`, cancelled after `d` with [`Elapsed`].
    fn timeout<F: Future>(d: Duration, f: F) -> impl Future<Output = Result<F::Output, Elapsed>>;
}

#[cfg(feature = "tokio")]
impl AsyncTimeout for DefaultSleep {
    #[inline]
    fn timeout<F: Future>(d: Duration, f: F) -> impl Future<Output = Result<F::Output, Elapsed>> {
        // `Timeout` saturates an unrepresentable deadline to its far future.
        let timeout = ::tokio::time::timeout(d, f);
        async move { timeout.await.map_err(|_| Elapsed) }
    }
}
