//! Support for the code `#[retry]` generates. Not a public API: names and
//! signatures here change without notice.

pub use core::future::Future;
pub use core::result::Result;
pub use core::time::Duration;

pub use crate::clock::Clock;
pub use crate::decision::{Decision, IntoDecision, RetryEvent};
pub use crate::jitter::Jitter;
pub use crate::policy::Policy;
pub use crate::retry::RetryState;
pub use crate::strategy::{
    Builtin, Constant, Decorrelated, Exponential, Fibonacci, Immediate, Linear, Strategy,
};

/// The call's start, read before the first attempt only if something needs
/// the time (`timed`, or a deadline); the state itself is built on the first
/// failure, so a success builds nothing.
#[inline]
pub fn started<S>(policy: &Policy<S>, clock: Clock, timed: bool) -> Option<std::time::Instant> {
    crate::retry::started(policy, clock, timed)
}

/// The state machine of a call that began at `start`.
#[inline]
pub fn start_at<S>(
    policy: &Policy<S>,
    clock: Clock,
    start: Option<std::time::Instant>,
) -> RetryState<'_, S> {
    RetryState::starting_at(policy, clock, start)
}

/// The clock of a blocking loop.
pub const SYNC_CLOCK: Clock = crate::clock::system;

/// The clock of an async loop.
#[inline]
pub fn async_clock() -> Clock {
    crate::clock::for_async()
}

/// The default sleep of a plain fn; a zero delay does not sleep.
pub use crate::sleep::blocking as sleep_blocking;

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
}

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
}

/// The error type of `R`.
pub type ErrorOf<R> = <R as RetryResult>::Err;

/// Checks `when` and gives its closure parameters the type `&E`.
#[inline]
pub fn when<R, D, F>(f: F) -> F
where
    R: RetryResult,
    F: FnMut(&ErrorOf<R>) -> D,
    D: IntoDecision,
{
    f
}

/// Applies `when` to an error. Same bounds as [`when`], so a mistake is
/// reported once.
#[inline]
pub fn decide<R, D, F>(when: &mut F, error: &ErrorOf<R>) -> Decision
where
    R: RetryResult,
    F: FnMut(&ErrorOf<R>) -> D,
    D: IntoDecision,
{
    when(error).into_decision()
}

/// Checks `on_retry` and gives its closure parameters their types.
#[inline]
pub fn on_retry<R, F>(f: F) -> F
where
    R: RetryResult,
    F: FnMut(&ErrorOf<R>, &RetryEvent),
{
    f
}

/// Calls `on_retry`. Same bounds as [`on_retry`], so a mistake is reported
/// once.
#[inline]
pub fn call_on_retry<R, F>(f: &mut F, error: &ErrorOf<R>, event: &RetryEvent)
where
    R: RetryResult,
    F: FnMut(&ErrorOf<R>, &RetryEvent),
{
    f(error, event)
}

/// A plain fn's `sleep = path`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `sleep` of a plain fn must be a `fn(Duration)`",
    label = "not a `fn(Duration)`",
    note = "an `async fn` takes `fn(Duration) -> impl Future<Output = ()>` instead"
)]
pub trait SyncSleep {
    /// Sleeps for `d`.
    fn sleep(&mut self, d: Duration);
}

impl<F: FnMut(Duration)> SyncSleep for F {
    #[inline]
    fn sleep(&mut self, d: Duration) {
        self(d)
    }
}

/// An `async fn`'s `sleep = path`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `sleep` of an `async fn` must be a `fn(Duration) -> impl Future<Output = ()>`, such as an `async fn(Duration)`",
    label = "not an async sleep",
    note = "a plain fn takes `fn(Duration)` instead"
)]
pub trait AsyncSleepFn {
    /// The sleep's future.
    type Future: Future<Output = ()>;
    /// Starts sleeping for `d`.
    fn sleep(&mut self, d: Duration) -> Self::Future;
}

#[diagnostic::do_not_recommend]
impl<F, Fut> AsyncSleepFn for F
where
    F: FnMut(Duration) -> Fut,
    Fut: Future<Output = ()>,
{
    type Future = Fut;
    #[inline]
    fn sleep(&mut self, d: Duration) -> Fut {
        self(d)
    }
}

/// Checks a plain fn's `sleep`.
#[inline]
pub fn sleep_sync<F: SyncSleep>(f: F) -> F {
    f
}

/// Checks an `async fn`'s `sleep`.
#[inline]
pub fn sleep_async<F: AsyncSleepFn>(f: F) -> F {
    f
}

/// Awaits a future of an `async fn`'s failure path (its sleep, pinned in the
/// function's future) through a poll function of its own, so that the
/// function's own poll, all that the success path runs, stays small enough
/// for the compiler to inline into its caller.
#[inline]
pub fn out_of_line<F: Future>(f: core::pin::Pin<&mut F>) -> OutOfLine<'_, F> {
    OutOfLine(f)
}

/// Runs the failure path of the loop (the decision, `on_retry`, tracing) in a
/// function of its own, for plain and `async` fns alike.
#[inline(never)]
pub fn out_of_line_sync<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// See [`out_of_line`].
pub struct OutOfLine<'a, F>(core::pin::Pin<&'a mut F>);

impl<F: Future> Future for OutOfLine<'_, F> {
    type Output = F::Output;

    #[inline(never)]
    fn poll(
        mut self: core::pin::Pin<&mut Self>,
        cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<F::Output> {
        self.0.as_mut().poll(cx)
    }
}

/// Gives an attempt's async block its output type, so `?` inside it knows
/// the error type to convert into.
#[inline]
pub fn attempt<R, Fut: Future<Output = R>>(fut: Fut) -> Fut {
    fut
}

/// What `policy = EXPR` may give: a [`Policy`] or a reference to one.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `policy` must be a `backoff_runtime::Policy` or `&Policy`, not `{Self}`",
    label = "expected a `Policy`"
)]
pub trait AsPolicy {
    /// The policy's strategy.
    type Strategy: Strategy;
    /// The policy.
    fn as_policy(&self) -> &Policy<Self::Strategy>;
}

impl<S: Strategy> AsPolicy for Policy<S> {
    type Strategy = S;
    #[inline]
    fn as_policy(&self) -> &Policy<S> {
        self
    }
}

impl<P: AsPolicy + ?Sized> AsPolicy for &P {
    type Strategy = P::Strategy;
    #[inline]
    fn as_policy(&self) -> &Policy<P::Strategy> {
        (**self).as_policy()
    }
}

/// Borrows the policy a `policy = EXPR` gave.
#[inline]
pub fn policy_ref<P: AsPolicy + ?Sized>(p: &P) -> &Policy<P::Strategy> {
    p.as_policy()
}

/// Gives an attempt's closure its return type, so `?` inside it knows the
/// error type to convert into; runs it once.
#[inline(always)]
pub fn attempt_sync<R, F: FnOnce() -> R>(f: F) -> R {
    f()
}

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
    /// so the future holds nothing but the timer).
    fn sleep(d: Duration) -> impl Future<Output = ()> + Send;
}

#[cfg(feature = "tokio")]
impl AsyncSleep for DefaultSleep {
    #[inline]
    fn sleep(d: Duration) -> impl Future<Output = ()> + Send {
        ::tokio::time::sleep(d)
    }
}

pub use crate::budget::RetryBudget;
pub use crate::circuit::{CircuitBreaker, CircuitOpen};
pub use crate::timeout::Elapsed;

/// What `budget = PATH` may name.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `budget` must name a `backoff_runtime::RetryBudget`, not `{Self}`",
    label = "not a `RetryBudget`",
    note = "declare it as `static BUDGET: RetryBudget = RetryBudget::new(10, 0.1);`"
)]
pub trait AsBudget {
    /// The budget.
    fn as_budget(&self) -> &RetryBudget;
}

impl AsBudget for RetryBudget {
    #[inline]
    fn as_budget(&self) -> &RetryBudget {
        self
    }
}

/// Borrows the budget a `budget = PATH` named.
#[inline]
pub fn budget<B: AsBudget + ?Sized>(b: &B) -> &RetryBudget {
    b.as_budget()
}

/// What `circuit = PATH` may name.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `circuit` must name a `backoff_runtime::CircuitBreaker`, not `{Self}`",
    label = "not a `CircuitBreaker`",
    note = "declare it as `static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));`"
)]
pub trait AsCircuit {
    /// The breaker.
    fn as_circuit(&self) -> &CircuitBreaker;
}

impl AsCircuit for CircuitBreaker {
    #[inline]
    fn as_circuit(&self) -> &CircuitBreaker {
        self
    }
}

/// Borrows the breaker a `circuit = PATH` named.
#[inline]
pub fn circuit<C: AsCircuit + ?Sized>(c: &C) -> &CircuitBreaker {
    c.as_circuit()
}

/// The error type of a function behind `circuit = ...`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: with `circuit`, the error type `{Self}` must implement `From<backoff_runtime::CircuitOpen>`",
    label = "no `From<CircuitOpen>` for `{Self}`",
    note = "an open breaker fails calls fast with `E::from(CircuitOpen)`; add `impl From<CircuitOpen> for {Self}`"
)]
pub trait FromCircuitOpen {
    /// The error of a refused call.
    fn from_circuit_open(e: CircuitOpen) -> Self;
}

#[diagnostic::do_not_recommend]
impl<E: From<CircuitOpen>> FromCircuitOpen for E {
    #[inline]
    fn from_circuit_open(e: CircuitOpen) -> Self {
        E::from(e)
    }
}

/// The error type of a function with `attempt_timeout = ...`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: with `attempt_timeout`, the error type `{Self}` must implement `From<backoff_runtime::Elapsed>`",
    label = "no `From<Elapsed>` for `{Self}`",
    note = "a timed-out attempt fails with `E::from(Elapsed)`; add `impl From<Elapsed> for {Self}`"
)]
pub trait FromElapsed {
    /// The error of a timed-out attempt.
    fn from_elapsed(e: Elapsed) -> Self;
}

#[diagnostic::do_not_recommend]
impl<E: From<Elapsed>> FromElapsed for E {
    #[inline]
    fn from_elapsed(e: Elapsed) -> Self {
        E::from(e)
    }
}

/// Runs an attempt under `attempt_timeout`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `attempt_timeout` needs the `tokio` feature of `backoff-runtime`",
    label = "no timer for `attempt_timeout`"
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

/// The error of a traced retry, shown through `Display` when it has one
/// (autoref specialization: [`TraceDisplay`] is found before
/// [`TraceFallback`] when both apply), else by its type's name. So turning
/// on the `tracing` feature never breaks a function whose error lacks
/// `Display`.
pub struct TraceError<'a, T>(pub &'a T);

/// Picked for errors that implement `Display`.
pub trait TraceDisplay {
    /// The error, displayable.
    fn trace_display(&self) -> &dyn core::fmt::Display;
}

impl<T: core::fmt::Display> TraceDisplay for TraceError<'_, T> {
    #[inline]
    fn trace_display(&self) -> &dyn core::fmt::Display {
        self.0
    }
}

/// Picked for errors without `Display`.
pub trait TraceFallback {
    /// A placeholder.
    fn trace_display(&self) -> &dyn core::fmt::Display;
}

impl<T> TraceFallback for &TraceError<'_, T> {
    #[inline]
    fn trace_display(&self) -> &dyn core::fmt::Display {
        &"(an error without `Display`)"
    }
}

/// Reports a retry to `tracing` (feature `tracing`): a WARN event with the
/// function, the attempt that failed, the delay and the error.
#[cfg(feature = "tracing")]
#[inline]
pub fn trace_retry(function: &str, error: &dyn core::fmt::Display, attempt: u32, delay: Duration) {
    ::tracing::warn!(
        target: "backoff_runtime",
        function,
        attempt,
        delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
        error = %error,
        "retrying after error"
    );
}

/// Without the `tracing` feature: nothing.
#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub fn trace_retry(
    _function: &str,
    _error: &dyn core::fmt::Display,
    _attempt: u32,
    _delay: Duration,
) {
}

/// Reports giving up to `tracing` (feature `tracing`): an ERROR event with
/// the function, the attempts made and the error returned.
#[cfg(feature = "tracing")]
#[inline]
pub fn trace_give_up(function: &str, error: &dyn core::fmt::Display, attempts: u32) {
    ::tracing::error!(
        target: "backoff_runtime",
        function,
        attempts,
        error = %error,
        "giving up"
    );
}

/// Without the `tracing` feature: nothing.
#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub fn trace_give_up(_function: &str, _error: &dyn core::fmt::Display, _attempts: u32) {}
