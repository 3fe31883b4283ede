//! The `tracing` glue (feature `tracing`): what a trace shows of an error,
//! the events, and the macros the expansion traces through.

use super::*;

/// The error of a traced retry, shown through `Display` when it has one
/// (autoref specialization: [`TraceDisplay`] is found before
/// [`TraceFallback`] when both apply), else by its type's name. So turning
/// on the `tracing` feature never breaks a function whose error lacks
/// `Display`.
pub struct TraceError<'a, T>(pub &'a T);

/// Picked for errors that implement `Display`.
pub trait TraceDisplay<'a> {
    /// The error, displayable.
    fn trace_display(&self) -> &'a dyn core::fmt::Display;
}

impl<'a, T: core::fmt::Display> TraceDisplay<'a> for TraceError<'a, T> {
    #[inline]
    fn trace_display(&self) -> &'a dyn core::fmt::Display {
        self.0
    }
}

/// Picked for errors without `Display`.
pub trait TraceFallback<'a> {
    /// A placeholder.
    fn trace_display(&self) -> &'a dyn core::fmt::Display;
}

impl<'a, T> TraceFallback<'a> for &TraceError<'a, T> {
    #[inline]
    fn trace_display(&self) -> &'a dyn core::fmt::Display {
        &"(an error without `Display`)"
    }
}

/// Reports a retry to `tracing` (feature `tracing`): a WARN event with the
/// function, the attempt that failed, the delay, the failure's kind (for a
/// policy with kinds) and the error, from the retry's `event`.
#[inline]
pub fn trace_retry(function: &str, error: &dyn core::fmt::Display, event: &RetryEvent) {
    ::tracing::warn!(
        target: "backoff_runtime",
        function,
        attempt = event.attempt,
        delay_ms = u64::try_from(event.delay.as_millis()).unwrap_or(u64::MAX),
        failure_kind = event.failure_kind,
        error = %error,
        "retrying after error"
    );
}

/// Reports giving up to `tracing` (feature `tracing`): an event with the
/// function, the calls made, the reason, the kind of the last failure (for
/// a policy with kinds) and the outcome returned. Its level
/// says how unexpected the end is: ERROR when retrying did not help (the
/// attempts, the deadline, the budget or the timeout ran out); WARN for a
/// breaker that refused (failing fast is its job) and for an outcome `when`
/// stopped after retries; DEBUG for one stopped on the first attempt, which
/// is an answer (a 404, a unique violation), not a failed retry.
#[inline]
pub fn trace_give_up(function: &str, outcome: &dyn core::fmt::Display, report: &GiveUp) {
    let (attempts, reason) = (report.attempts, report.reason.as_str());
    // (Recorded only for a policy with kinds: `on(..)`'s pattern text.)
    let failure_kind = report.failure_kind;
    macro_rules! giving_up {
        ($level:ident) => {
            ::tracing::$level!(
                target: "backoff_runtime",
                function, attempts, reason, failure_kind, error = %outcome, "giving up"
            )
        };
    }
    match report.reason {
        GiveUpReason::Stopped if report.attempts <= 1 => giving_up!(debug),
        GiveUpReason::Stopped | GiveUpReason::CircuitOpen | GiveUpReason::Cancelled => {
            giving_up!(warn)
        }
        _ => giving_up!(error),
    }
}

/// What a trace shows of `error: &E` (through `Display` when `E` has it,
/// see [`TraceError`]): a `&dyn Display`.
#[doc(hidden)]
#[macro_export]
macro_rules! __backoff_shown {
    (error: $error:expr) => {{
        #[allow(unused_imports)]
        use $crate::__private::{TraceDisplay as _, TraceFallback as _};
        (&$crate::__private::TraceError($error)).trace_display()
    }};
}

/// Traces to `tracing` (see [`Trace`]): the function's name, and its
/// error's `Display` (or a placeholder for an error without one, chosen
/// where the error's type is known).
pub struct Traced<E> {
    /// The function's name.
    pub name: &'static str,
    /// Shows an error.
    pub show: Show<E>,
}

/// How a [`Traced`] shows an error.
type Show<E> = for<'a> fn(&'a E) -> &'a dyn core::fmt::Display;

impl<E> Traced<E> {
    /// The trace of the function `name`, made where `result`, an attempt's
    /// outcome, gives the error's type.
    #[inline(always)]
    pub fn of_result<T>(name: &'static str, result: &Result<T, E>, show: Show<E>) -> Self {
        let _ = result;
        Traced { name, show }
    }

    /// The same, after an attempt that failed with `error`.
    #[inline(always)]
    pub fn of_error(name: &'static str, error: &E, show: Show<E>) -> Self {
        let _ = error;
        Traced { name, show }
    }
}

impl<E> Trace<E> for Traced<E> {
    #[inline]
    fn retry(&self, error: &E, event: &RetryEvent) {
        trace_retry(self.name, (self.show)(error), event);
    }
    #[inline]
    fn give_up(&self, error: &E, report: &GiveUp) {
        trace_give_up(self.name, (self.show)(error), report);
    }
}

/// The [`Trace`] of a function named `$name` whose attempts are
/// `$attempts` (a `&impl FnMut() -> R`, whose `R` gives the error's type),
/// or made after an attempt whose outcome is `result: &Result<T, E>`:
/// [`Traced`] with the `tracing` feature, else [`NoTrace`].
#[doc(hidden)]
#[macro_export]
macro_rules! __backoff_tracer {
    ($name:expr, result: $result:expr) => {
        $crate::__private::Traced::of_result($name, $result, |__backoff_error| {
            $crate::__backoff_shown!(error: __backoff_error)
        })
    };
    ($name:expr, error: $error:expr) => {
        $crate::__private::Traced::of_error($name, $error, |__backoff_error| {
            $crate::__backoff_shown!(error: __backoff_error)
        })
    };
    ($name:expr, $attempts:expr) => {
        $crate::__private::RetryResult::traced($name, $attempts, |__backoff_error| {
            $crate::__backoff_shown!(error: __backoff_error)
        })
    };
}
