//! Support for the code `#[retry]` generates. Not a public API: names and
//! signatures here change without notice.

pub use core::future::Future;
pub use core::result::Result;
pub use core::time::Duration;

pub use crate::clock::Clock;
pub use crate::decision::{
    AttemptContext, Decision, GiveUp, GiveUpReason, IntoDecision, RetryEvent,
};
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

/// Checks `when_ok` and gives its closure parameters the type `&T`.
#[inline]
pub fn when_ok<R, D, F>(f: F) -> F
where
    R: RetryResult,
    F: FnMut(&OkOf<R>) -> D,
    D: IntoDecision,
{
    f
}

/// Applies `when_ok` to a value: [`Decision::Stop`] accepts it.
#[inline]
pub fn decide_ok<R, D, F>(when_ok: &mut F, value: &OkOf<R>) -> Decision
where
    R: RetryResult,
    F: FnMut(&OkOf<R>) -> D,
    D: IntoDecision,
{
    when_ok(value).into_decision()
}

/// The success type of `R`.
pub type OkOf<R> = <R as RetryResult>::Ok;

/// Checks `on_retry` beside `when_ok`: it sees the whole outcome.
#[inline]
pub fn on_retry_outcome<R, F>(f: F) -> F
where
    R: RetryResult,
    F: FnMut(&Result<OkOf<R>, ErrorOf<R>>, &RetryEvent),
{
    f
}

/// Calls an [`on_retry_outcome`].
#[inline]
pub fn call_on_retry_outcome<R, F>(
    f: &mut F,
    outcome: &Result<OkOf<R>, ErrorOf<R>>,
    event: &RetryEvent,
) where
    R: RetryResult,
    F: FnMut(&Result<OkOf<R>, ErrorOf<R>>, &RetryEvent),
{
    f(outcome, event)
}

/// Checks `on_giveup` and gives its closure parameters their types.
#[inline]
pub fn on_giveup<R, F>(f: F) -> F
where
    R: RetryResult,
    F: FnOnce(&Result<OkOf<R>, ErrorOf<R>>, &GiveUp),
{
    f
}

/// Calls `on_giveup`, once. Same bounds as [`on_giveup`], so a mistake is
/// reported once.
#[inline]
pub fn call_on_giveup<R, F>(
    f: &mut Option<F>,
    outcome: &Result<OkOf<R>, ErrorOf<R>>,
    report: &GiveUp,
) where
    R: RetryResult,
    F: FnOnce(&Result<OkOf<R>, ErrorOf<R>>, &GiveUp),
{
    if let Some(f) = f.take() {
        f(outcome, report)
    }
}

/// The report of a state that gave up.
#[inline]
pub fn report<S>(state: &RetryState<'_, S>) -> GiveUp {
    state.give_up().unwrap_or(GiveUp::new(
        state.attempt(),
        state.elapsed(),
        GiveUpReason::Attempts,
    ))
}

/// The report of a call that ran past its `timeout` after `calls` calls.
#[cold]
pub fn timed_out(calls: u32, clock: Clock, start: Option<std::time::Instant>) -> GiveUp {
    let elapsed = start.map_or(Duration::ZERO, |s| clock().saturating_duration_since(s));
    GiveUp::new(calls, elapsed, GiveUpReason::Timeout)
}

/// The number of the attempt about to run, from 1.
#[inline]
pub fn attempt_number<S>(slot: &Option<RetryState<'_, S>>) -> u32 {
    match slot {
        Some(state) => state.attempt().saturating_add(1),
        None => 1,
    }
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

/// What the failure path decided: sleep, or give up with the outcome. (Not
/// a `Result`, whose large `Err` would draw `clippy::result_large_err` onto
/// code the user did not write.)
pub enum Next<R> {
    /// Sleep this long, then try again.
    Sleep(Duration),
    /// Return this outcome.
    GiveUp(R),
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
    message = "`#[retry]`: `budget` must give a `backoff_runtime::RetryBudget`, not `{Self}`",
    label = "not a `RetryBudget`",
    note = "name a `static BUDGET: RetryBudget = RetryBudget::new(10, 0.1);`, or give one owned elsewhere, such as `budget = self.budget` or `budget = &*self.shared_budget` (an `Arc`)"
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

#[diagnostic::do_not_recommend]
impl<T: AsBudget + ?Sized> AsBudget for &T {
    #[inline]
    fn as_budget(&self) -> &RetryBudget {
        (**self).as_budget()
    }
}

#[diagnostic::do_not_recommend]
impl<T: AsBudget + ?Sized> AsBudget for std::sync::Arc<T> {
    #[inline]
    fn as_budget(&self) -> &RetryBudget {
        (**self).as_budget()
    }
}

#[diagnostic::do_not_recommend]
impl<T: AsBudget + ?Sized> AsBudget for Box<T> {
    #[inline]
    fn as_budget(&self) -> &RetryBudget {
        (**self).as_budget()
    }
}

/// A `budget` or `circuit` named by a `static`'s path: it must be a
/// `static` (a `const` would be a new one for each call).
#[inline]
pub fn must_be_static<T: ?Sized>(value: &'static T) -> &'static T {
    value
}

/// Borrows the budget a `budget = PATH` named.
#[inline]
pub fn budget<B: AsBudget + ?Sized>(b: &B) -> &RetryBudget {
    b.as_budget()
}

/// What `circuit = PATH` may name.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `circuit` must give a `backoff_runtime::CircuitBreaker`, not `{Self}`",
    label = "not a `CircuitBreaker`",
    note = "name a `static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));`, or give one owned elsewhere, such as `circuit = self.breaker` or `circuit = &*self.shared_breaker` (an `Arc`)"
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

#[diagnostic::do_not_recommend]
impl<T: AsCircuit + ?Sized> AsCircuit for &T {
    #[inline]
    fn as_circuit(&self) -> &CircuitBreaker {
        (**self).as_circuit()
    }
}

#[diagnostic::do_not_recommend]
impl<T: AsCircuit + ?Sized> AsCircuit for std::sync::Arc<T> {
    #[inline]
    fn as_circuit(&self) -> &CircuitBreaker {
        (**self).as_circuit()
    }
}

#[diagnostic::do_not_recommend]
impl<T: AsCircuit + ?Sized> AsCircuit for Box<T> {
    #[inline]
    fn as_circuit(&self) -> &CircuitBreaker {
        (**self).as_circuit()
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
    note = "an open breaker fails calls fast with `E::from(CircuitOpen)`; for an error type of your own, add `impl From<CircuitOpen> for {Self}`; for another crate's, wrap it in an enum of yours with a variant for `CircuitOpen`"
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
    message = "`#[retry]`: with `timeout` or `attempt_timeout`, the error type `{Self}` must implement `From<backoff_runtime::Elapsed>`",
    label = "no `From<Elapsed>` for `{Self}`",
    note = "a timed-out call fails with `E::from(Elapsed)`; for an error type of your own, add `impl From<Elapsed> for {Self}`; for another crate's, wrap it in an enum of yours with a variant for `Elapsed`"
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

/// What a trace shows of an outcome: the error through `show`, or a note
/// for an `Ok` that `when_ok` rejected.
#[inline]
pub fn shown<'a, T, E>(
    outcome: &'a Result<T, E>,
    show: impl FnOnce(&'a E) -> &'a dyn core::fmt::Display,
) -> &'a dyn core::fmt::Display {
    match outcome {
        Err(e) => show(e),
        Ok(_) => &"an `Ok` value that `when_ok` rejected",
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

/// Reports giving up to `tracing` (feature `tracing`): an event with the
/// function, the calls made, the reason and the outcome returned. Its level
/// says how unexpected the end is: ERROR when retrying did not help (the
/// attempts, the deadline, the budget or the timeout ran out); WARN for a
/// breaker that refused (failing fast is its job) and for an outcome `when`
/// stopped after retries; DEBUG for one stopped on the first attempt, which
/// is an answer (a 404, a unique violation), not a failed retry.
#[cfg(feature = "tracing")]
#[inline]
pub fn trace_give_up(function: &str, outcome: &dyn core::fmt::Display, report: &GiveUp) {
    let (attempts, reason) = (report.attempts, report.reason.as_str());
    match report.reason {
        GiveUpReason::Stopped if report.attempts <= 1 => ::tracing::debug!(
            target: "backoff_runtime",
            function, attempts, reason, error = %outcome, "giving up"
        ),
        GiveUpReason::Stopped | GiveUpReason::CircuitOpen => ::tracing::warn!(
            target: "backoff_runtime",
            function, attempts, reason, error = %outcome, "giving up"
        ),
        _ => ::tracing::error!(
            target: "backoff_runtime",
            function, attempts, reason, error = %outcome, "giving up"
        ),
    }
}

/// Without the `tracing` feature: nothing.
#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub fn trace_give_up(_function: &str, _outcome: &dyn core::fmt::Display, _report: &GiveUp) {}

/// The failure path's decision, for a loop that keeps the outcome itself:
/// the state is built by `make` on the first failure, then asked for the
/// delay after this one, given `decide()`'s verdict on the outcome.
/// `Some(delay)`: sleep, then try again; `None`: give up (the state in
/// `slot` then has the report).
///
/// Out of line, and generic only over the strategy and the two closures
/// (each use its own copy, in which a constant verdict such as
/// `|| Decision::Retry` folds away), it never owns the outcome: the loop
/// moves nothing in and nothing back, and the function holding the loop
/// keeps no frame for the failure path. A plain retry costs what
/// [`RetryState::next_delay_for`]'s common path costs, plus a call.
#[inline(never)]
pub fn next_delay<'p, S: Strategy>(
    slot: &mut Option<RetryState<'p, S>>,
    make: impl FnOnce() -> RetryState<'p, S>,
    decide: impl FnOnce() -> Decision,
) -> Option<Duration> {
    let state = slot.get_or_insert_with(make);
    state.next_delay_for(decide())
}
