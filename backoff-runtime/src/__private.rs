//! Support for the code `#[retry]` generates. Not a public API: names and
//! signatures here change without notice.

pub use core::future::Future;
pub use core::ops::ControlFlow;
pub use core::result::Result;
pub use core::time::Duration;

pub use crate::clock::Clock;
pub use crate::decision::{
    AttemptContext, Decision, GiveUp, GiveUpReason, IntoDecision, RetryEvent,
};
pub use crate::fixed::{
    ConstantOf, DecorrelatedOf, ExponentialOf, FibonacciOf, Fixed, FixedStart, FixedStrategy,
    LinearOf,
};
pub use crate::jitter::Jitter;
pub use crate::policy::Policy;
pub use crate::retry::{Capped, Carried, Previous, RetryState};
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
pub const ASYNC_CLOCK: Clock = crate::clock::for_async();

/// What a call's retry state is built from, on its first failure: the
/// policy, the loop's clock, the call's start (if read) and the budget (if
/// any). For a policy the attribute built, with no start time or budget,
/// it is a constant (`Fixed::START`, or the `static` the attribute writes
/// for `throttled` and `retry_after_max`), so the failure path passes one
/// address, or none.
pub struct Start<'p, S> {
    /// The policy.
    pub policy: &'p Policy<S>,
    pub(crate) clock: Clock,
    start: Option<std::time::Instant>,
    budget: Option<&'p RetryBudget>,
}

impl<'p, S> Start<'p, S> {
    /// A policy and a clock: no start time, no budget.
    pub const fn new(policy: &'p Policy<S>, clock: Clock) -> Self {
        Start {
            policy,
            clock,
            start: None,
            budget: None,
        }
    }

    /// A policy, a clock, the call's start and a budget.
    #[inline(always)]
    pub fn at(
        policy: &'p Policy<S>,
        clock: Clock,
        start: Option<std::time::Instant>,
        budget: Option<&'p RetryBudget>,
    ) -> Self {
        Start {
            policy,
            clock,
            start,
            budget,
        }
    }

    /// The state of a call that has just failed for the first time.
    #[inline]
    pub(crate) fn state(&self) -> RetryState<'p, S> {
        let state = RetryState::starting_at(self.policy, self.clock, self.start);
        match self.budget {
            Some(budget) => state.with_budget(budget),
            None => state,
        }
    }
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
    /// The blocking loop of a plain fn under `#[retry]` whose policy is the
    /// type `P` (see [`Fixed`]): `op` is the body, returning the function's
    /// own type, `FnMut` so that the loop can live out of line. The first
    /// attempt runs here, inline; the rest, the retry state and the sleeps,
    /// out of line, so that a call that succeeds at once pays only for its
    /// test of the outcome.
    ///
    /// (A method of this trait, not a function bounded by it: a return type
    /// that is not a `Result` is then reported once, at the expansion's
    /// call, spanned on that type, and never as a bound of the runtime's.)
    fn retry_blocking_fixed<P: FixedStart>(
        trace: impl Trace<Self::Err>,
        op: impl FnMut() -> Self,
    ) -> Self;
    /// [`retry_blocking_fixed`](Self::retry_blocking_fixed) from a `start`
    /// the function builds (a deadline, a start time).
    fn retry_blocking<S: Strategy>(
        start: &Start<'_, S>,
        trace: impl Trace<Self::Err>,
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
    fn retry_blocking_fixed<P: FixedStart>(trace: impl Trace<E>, op: impl FnMut() -> Self) -> Self {
        crate::retry::blocking(P::START, trace, op)
    }
    #[inline(always)]
    fn retry_blocking<S: Strategy>(
        start: &Start<'_, S>,
        trace: impl Trace<E>,
        op: impl FnMut() -> Self,
    ) -> Self {
        crate::retry::blocking(start, trace, op)
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

// The checks of `when`, `when_ok`, `on_retry`, `on_giveup` and `sleep`.
//
// The generated code calls the user's function itself, with each argument
// passed through a trait of its own, `<_ as WhenParameter<_>>::pass(error)`, and
// its result through another. A mistake is then one unimplemented trait,
// reported with the trait's text in the argument's terms ("`when` must take
// the error as `&u32`, not `&String`"): not a signature mismatch (E0631,
// E0271, whose text cannot be changed), and, being a trait method's own
// bound, with no "required by a bound in" note naming this module. Each impl
// is `do_not_recommend`, so that no list of implementations points here
// either; the traits carry lifetimes, not bounds, so a closure annotated
// `&E` still takes any borrow.

/// The impl of a two-impl check that holds when the value fits.
///
/// rustc takes a trait's only impl on the shape of its type alone, and
/// reports a bound of that impl which fails (a function of two parameters
/// where one is called for: "this function takes 2 arguments but 1
/// argument was supplied", with a fix that edits the attribute). With a
/// second impl, told apart by a parameter the call leaves to inference, it
/// weighs both impls against the type: when neither holds, the error is the
/// check's own trait, with its message, and what the call returns stays
/// unknown, so its uses add no error of their own.
pub struct Holds;

/// The impl of a two-impl check that holds for no type (see [`Holds`]).
pub struct Fails;

/// Implemented by no type.
pub trait Never {}

/// Calls `when`: a function of one parameter.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `when` must be a function of one parameter, the error, not `{Self}`",
    label = "expected a function of one parameter",
    note = "`when` is called with a reference to each error and returns `true` to retry it (or a `Decision`): declare it as `fn(&E) -> bool`"
)]
pub trait WhenFn<M, A> {
    /// What it returns.
    type Output;
    /// Calls it.
    fn call(&mut self, error: A) -> Self::Output;
}

#[diagnostic::do_not_recommend]
impl<F: FnMut(A) -> O, A, O> WhenFn<Holds, A> for F {
    type Output = O;
    #[inline(always)]
    fn call(&mut self, error: A) -> O {
        self(error)
    }
}

#[diagnostic::do_not_recommend]
impl<F: Never, A> WhenFn<Fails, A> for F {
    type Output = ();
    #[inline(always)]
    fn call(&mut self, _: A) {}
}

/// Calls `when_ok`: a function of one parameter.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `when_ok` must be a function of one parameter, the `Ok` value, not `{Self}`",
    label = "expected a function of one parameter",
    note = "`when_ok` is called with a reference to each `Ok` value and returns `true` to retry it (or a `Decision`): declare it as `fn(&T) -> bool`"
)]
pub trait WhenOkFn<M, A> {
    /// What it returns.
    type Output;
    /// Calls it.
    fn call(&mut self, value: A) -> Self::Output;
}

#[diagnostic::do_not_recommend]
impl<F: FnMut(A) -> O, A, O> WhenOkFn<Holds, A> for F {
    type Output = O;
    #[inline(always)]
    fn call(&mut self, value: A) -> O {
        self(value)
    }
}

#[diagnostic::do_not_recommend]
impl<F: Never, A> WhenOkFn<Fails, A> for F {
    type Output = ();
    #[inline(always)]
    fn call(&mut self, _: A) {}
}

/// Calls `on_retry`: a function of two parameters.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `on_retry` must be a function of two parameters, not `{Self}`",
    label = "expected a function of two parameters",
    note = "`on_retry` is called before each sleep with the error (beside `when_ok`, the whole outcome) and the event: declare it as `fn(&E, &RetryEvent)`, or beside `when_ok` as `fn(&Result<T, E>, &RetryEvent)`"
)]
pub trait OnRetryFn<M, A, B> {
    /// What it returns.
    type Output;
    /// Calls it.
    fn call(&mut self, first: A, event: B) -> Self::Output;
}

#[diagnostic::do_not_recommend]
impl<F: FnMut(A, B) -> O, A, B, O> OnRetryFn<Holds, A, B> for F {
    type Output = O;
    #[inline(always)]
    fn call(&mut self, first: A, event: B) -> O {
        self(first, event)
    }
}

#[diagnostic::do_not_recommend]
impl<F: Never, A, B> OnRetryFn<Fails, A, B> for F {
    type Output = ();
    #[inline(always)]
    fn call(&mut self, _: A, _: B) {}
}

/// Calls `on_giveup`, once: a function of two parameters.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `on_giveup` must be a function of two parameters, not `{Self}`",
    label = "expected a function of two parameters",
    note = "`on_giveup` is called once, on giving up, with the outcome the call returns and the give-up record: declare it as `fn(&Result<T, E>, &GiveUp)`"
)]
pub trait OnGiveupFn<M, A, B> {
    /// What it returns.
    type Output;
    /// Calls it.
    fn call(self, outcome: A, report: B) -> Self::Output;
}

#[diagnostic::do_not_recommend]
impl<F: FnOnce(A, B) -> O, A, B, O> OnGiveupFn<Holds, A, B> for F {
    type Output = O;
    #[inline(always)]
    fn call(self, outcome: A, report: B) -> O {
        self(outcome, report)
    }
}

#[diagnostic::do_not_recommend]
impl<F: Never, A, B> OnGiveupFn<Fails, A, B> for F {
    type Output = ();
    #[inline(always)]
    fn call(self, _: A, _: B) {}
}

/// Calls `sleep`: a function of one parameter.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `sleep` must be a function of one parameter, the delay, not `{Self}`",
    label = "expected a function of one parameter",
    note = "`sleep` is called with each delay, a `std::time::Duration`: name a function such as `std::thread::sleep` (a plain fn) or `tokio::time::sleep` (an `async fn`)"
)]
pub trait SleepFn<M, A> {
    /// What it returns.
    type Output;
    /// Calls it.
    fn call(&mut self, delay: A) -> Self::Output;
}

#[diagnostic::do_not_recommend]
impl<F: FnMut(A) -> O, A, O> SleepFn<Holds, A> for F {
    type Output = O;
    #[inline(always)]
    fn call(&mut self, delay: A) -> O {
        self(delay)
    }
}

#[diagnostic::do_not_recommend]
impl<F: Never, A> SleepFn<Fails, A> for F {
    type Output = ();
    #[inline(always)]
    fn call(&mut self, _: A) {}
}

/// `when`'s parameter: the error, `&E`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `when` must take the error as `&{E}`, not `{Self}`",
    label = "this takes `{Self}`",
    note = "`when` is called with a reference to each error and returns `true` to retry it (or a `Decision`): declare its parameter as `&{E}`"
)]
pub trait WhenParameter<'a, E> {
    /// The error, as `when` takes it.
    fn pass(error: &'a E) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a, E> WhenParameter<'a, E> for &'a E {
    #[inline(always)]
    fn pass(error: &'a E) -> Self {
        error
    }
}

/// `when_ok`'s parameter: the `Ok` value, `&T`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `when_ok` must take the `Ok` value as `&{T}`, not `{Self}`",
    label = "this takes `{Self}`",
    note = "`when_ok` is called with a reference to each `Ok` value and returns `true` to retry it (or a `Decision`): declare its parameter as `&{T}`"
)]
pub trait WhenOkParameter<'a, T> {
    /// The value, as `when_ok` takes it.
    fn pass(value: &'a T) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a, T> WhenOkParameter<'a, T> for &'a T {
    #[inline(always)]
    fn pass(value: &'a T) -> Self {
        value
    }
}

/// What `when_ok` returns. (`when` returns an [`IntoDecision`], whose own
/// message names `when`.)
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `when_ok` must return `bool` or `backoff_runtime::Decision`, not `{Self}`",
    label = "this returns `{Self}`",
    note = "return `true` to retry the `Ok` value and `false` to accept it, or a `Decision` for finer control"
)]
pub trait WhenOkReturn {
    /// The decision.
    fn decision(self) -> Decision;
}

#[diagnostic::do_not_recommend]
impl<D: IntoDecision> WhenOkReturn for D {
    #[inline(always)]
    fn decision(self) -> Decision {
        self.into_decision()
    }
}

/// `on_retry`'s first parameter without `when_ok`: the error, `&E`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `on_retry` must take the error as `&{E}` first, not `{Self}`",
    label = "this takes `{Self}` first",
    note = "`on_retry` is called before each sleep with the error and the event: declare it as `fn(&{E}, &RetryEvent)`"
)]
pub trait OnRetryParameter<'a, E> {
    /// The error, as `on_retry` takes it.
    fn pass(error: &'a E) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a, E> OnRetryParameter<'a, E> for &'a E {
    #[inline(always)]
    fn pass(error: &'a E) -> Self {
        error
    }
}

/// `on_retry`'s first parameter beside `when_ok`: the outcome,
/// `&Result<T, E>`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: beside `when_ok`, `on_retry` must take the outcome as `&Result<{T}, {E}>` first, not `{Self}`",
    label = "this takes `{Self}` first",
    note = "with `when_ok`, an `Ok` value may be retried too, so `on_retry` sees the whole outcome: declare it as `fn(&Result<{T}, {E}>, &RetryEvent)`"
)]
pub trait OnRetryOutcomeParameter<'a, T, E> {
    /// The outcome, as `on_retry` takes it.
    fn pass(outcome: &'a Result<T, E>) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a, T, E> OnRetryOutcomeParameter<'a, T, E> for &'a Result<T, E> {
    #[inline(always)]
    fn pass(outcome: &'a Result<T, E>) -> Self {
        outcome
    }
}

/// `on_retry`'s second parameter: `&RetryEvent`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `on_retry` must take the event as `&RetryEvent` second, not `{Self}`",
    label = "this takes `{Self}` second",
    note = "declare the second parameter as `&RetryEvent`: `backoff_runtime::RetryEvent` tells the attempt that failed, the delay before the next one and the time elapsed"
)]
pub trait OnRetryEventParameter<'a, V> {
    /// The event, as `on_retry` takes it.
    fn pass(event: &'a V) -> Self;
}

// (Generic in `V`, which is `RetryEvent`, so that rustc does not point
// at this impl as one for `&RetryEvent` when the event is taken by value.)
#[diagnostic::do_not_recommend]
impl<'a, V> OnRetryEventParameter<'a, V> for &'a V {
    #[inline(always)]
    fn pass(event: &'a V) -> Self {
        event
    }
}

/// What `on_retry` returns: nothing.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `on_retry` must return `()`, not `{Self}`",
    label = "this returns `{Self}`",
    note = "`on_retry` is called before each sleep and what it returns is dropped: make it a plain function that returns nothing (the future of an `async fn` would never run)"
)]
pub trait OnRetryReturn {
    /// Nothing.
    fn done(self);
}

#[diagnostic::do_not_recommend]
impl OnRetryReturn for () {
    #[inline(always)]
    fn done(self) {}
}

/// `on_giveup`'s first parameter: the outcome, `&Result<T, E>`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `on_giveup` must take the outcome as `&Result<{T}, {E}>` first, not `{Self}`",
    label = "this takes `{Self}` first",
    note = "`on_giveup` is called once, on giving up, with the outcome the call returns and the give-up record: declare it as `fn(&Result<{T}, {E}>, &GiveUp)`"
)]
pub trait OnGiveupParameter<'a, T, E> {
    /// The outcome, as `on_giveup` takes it.
    fn pass(outcome: &'a Result<T, E>) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a, T, E> OnGiveupParameter<'a, T, E> for &'a Result<T, E> {
    #[inline(always)]
    fn pass(outcome: &'a Result<T, E>) -> Self {
        outcome
    }
}

/// `on_giveup`'s second parameter: `&GiveUp`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `on_giveup` must take the give-up record as `&GiveUp` second, not `{Self}`",
    label = "this takes `{Self}` second",
    note = "declare the second parameter as `&GiveUp`: `backoff_runtime::GiveUp` tells the calls made, the time elapsed and why the call gave up"
)]
pub trait OnGiveupRecordParameter<'a, V> {
    /// The record, as `on_giveup` takes it.
    fn pass(report: &'a V) -> Self;
}

// (Generic in `V`, which is `GiveUp`: see `OnRetryEventParameter`.)
#[diagnostic::do_not_recommend]
impl<'a, V> OnGiveupRecordParameter<'a, V> for &'a V {
    #[inline(always)]
    fn pass(report: &'a V) -> Self {
        report
    }
}

/// What `on_giveup` returns: nothing.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `on_giveup` must return `()`, not `{Self}`",
    label = "this returns `{Self}`",
    note = "`on_giveup` is called once, on giving up, and what it returns is dropped: make it a plain function that returns nothing (the future of an `async fn` would never run)"
)]
pub trait OnGiveupReturn {
    /// Nothing.
    fn done(self);
}

#[diagnostic::do_not_recommend]
impl OnGiveupReturn for () {
    #[inline(always)]
    fn done(self) {}
}

/// The report of a state that gave up.
#[inline]
pub fn report<S>(state: &RetryState<'_, S>) -> GiveUp {
    // (`_else`: the clock is read only when the state has no record.)
    state
        .give_up()
        .unwrap_or_else(|| GiveUp::new(state.attempt(), state.elapsed(), GiveUpReason::Attempts))
}

/// The report of the state in `slot`, which gave up: [`next_delay`] returned
/// `None`, so it holds one (an empty slot, which the loop never passes, is a
/// call that gave up before any attempt).
#[inline]
pub fn report_of<S>(slot: &Option<RetryState<'_, S>>) -> GiveUp {
    match slot {
        Some(state) => report(state),
        None => GiveUp::new(0, Duration::ZERO, GiveUpReason::Attempts),
    }
}

/// A success with a budget and no breaker: the state, if a failure built
/// it, reports it (and deposits); else the budget is paid directly, and no
/// state is built for a call that succeeded at once.
#[inline]
pub fn succeeded_with_budget<S>(slot: &mut Option<RetryState<'_, S>>, budget: &RetryBudget) {
    match slot {
        Some(state) => state.on_success(),
        None => budget.deposit(),
    }
}

/// The event of the retry [`next_delay`] just granted with `delay`, for
/// `on_retry` (an empty slot, which the loop never passes, is attempt 0).
#[inline]
pub fn event_of<S>(slot: &Option<RetryState<'_, S>>, delay: Duration) -> RetryEvent {
    match slot {
        Some(state) => state.event(delay),
        None => RetryEvent::new(0, delay, Duration::ZERO),
    }
}

/// The attempt that just failed, for a trace of the retry [`next_delay`]
/// granted (no clock read).
#[inline]
pub fn failed_attempt<S>(slot: &Option<RetryState<'_, S>>) -> u32 {
    slot.as_ref().map_or(0, RetryState::attempt)
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

/// `sleep`'s parameter: the delay, a [`Duration`].
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `sleep` must take a `Duration`, not `{Self}`",
    label = "this takes `{Self}`",
    note = "`sleep` is called with each delay, a `std::time::Duration`"
)]
pub trait SleepParameter {
    /// The delay, as `sleep` takes it.
    fn pass(delay: Duration) -> Self;
}

#[diagnostic::do_not_recommend]
impl SleepParameter for Duration {
    #[inline(always)]
    fn pass(delay: Duration) -> Self {
        delay
    }
}

/// What a plain fn's `sleep` returns: nothing (it blocks).
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `sleep` of a plain fn must block and return `()`, not `{Self}`",
    label = "this returns `{Self}`",
    note = "this function is not `async`, so it sleeps by blocking, as `std::thread::sleep` does: make it an `async fn` to use an async sleep such as `tokio::time::sleep`"
)]
pub trait BlockingSleepReturn {
    /// Nothing.
    fn done(self);
}

#[diagnostic::do_not_recommend]
impl BlockingSleepReturn for () {
    #[inline(always)]
    fn done(self) {}
}

/// What an `async fn`'s `sleep` returns: a future of `()`.
///
/// Two impls (see [`Holds`]): for a value that is no future of `()`, the
/// type of [`sleeping`](AsyncSleepReturn::sleeping) stays unknown, so the
/// `.await` of it adds no error of its own.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `sleep` of an `async fn` must return a future of `()`, not `{Self}`",
    label = "this returns `{Self}`",
    note = "an `async fn` sleeps by awaiting: pass an async sleep such as `tokio::time::sleep` or an `async fn(Duration)` (a blocking sleep such as `std::thread::sleep` would block the executor's thread)"
)]
pub trait AsyncSleepReturn<M> {
    /// The future to await.
    type Sleep;
    /// The future, to await.
    fn sleeping(self) -> Self::Sleep;
}

/// The output of an async sleep: `()`.
pub trait Unit {}

impl Unit for () {}

#[diagnostic::do_not_recommend]
impl<F> AsyncSleepReturn<Holds> for F
where
    F: Future,
    F::Output: Unit,
{
    type Sleep = F;
    #[inline(always)]
    fn sleeping(self) -> F {
        self
    }
}

#[diagnostic::do_not_recommend]
impl<F: Never> AsyncSleepReturn<Fails> for F {
    type Sleep = F;
    #[inline(always)]
    fn sleeping(self) -> F {
        self
    }
}

#[cfg(feature = "tokio")]
pin_project_lite::pin_project! {
    /// The default sleep of an `async fn`: tokio's timer, held in the
    /// function's future by value, and polled through a poll function of
    /// its own, so that the function's own poll, all that the success path
    /// runs, stays small enough for the compiler to inline into its caller.
    pub struct DefaultSleeping {
        #[pin]
        sleep: ::tokio::time::Sleep,
    }
}

#[cfg(feature = "tokio")]
impl Future for DefaultSleeping {
    type Output = ();

    #[inline(never)]
    fn poll(
        self: core::pin::Pin<&mut Self>,
        cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<()> {
        self.project().sleep.poll(cx)
    }
}

/// Whether a delay is slept: it is not zero. (By value: the generated code
/// borrows nothing it would then keep in an `async fn`'s future.)
#[inline(always)]
pub fn sleeps(delay: Duration) -> bool {
    !delay.is_zero()
}

/// Gives an attempt's async block its output type, so `?` inside it knows
/// the error type to convert into.
#[inline]
pub fn attempt<R, Fut: Future<Output = R>>(fut: Fut) -> Fut {
    fut
}

/// What `policy = EXPR` may give: a [`Policy`] or a reference to one. The
/// strategy is a parameter, not an associated type, so that a value of
/// another type is one error: the policy's uses after it are left
/// ambiguous, which rustc does not report beside an error.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `policy` must be a `backoff_runtime::Policy` or `&Policy`, not `{Self}`",
    label = "expected a `Policy`",
    note = "build one with `Policy::exponential(..)` or another constructor, in a `static` or in a value the function can reach, such as `policy = self.policy`"
)]
pub trait AsPolicy<S> {
    /// The policy.
    fn as_policy(&self) -> &Policy<S>;
}

#[diagnostic::do_not_recommend]
impl<S: Strategy> AsPolicy<S> for Policy<S> {
    #[inline]
    fn as_policy(&self) -> &Policy<S> {
        self
    }
}

#[diagnostic::do_not_recommend]
impl<S, P: AsPolicy<S> + ?Sized> AsPolicy<S> for &P {
    #[inline]
    fn as_policy(&self) -> &Policy<S> {
        (**self).as_policy()
    }
}

/// Gives an attempt's closure its return type, so `?` inside it knows the
/// error type to convert into; runs it once.
#[inline(always)]
pub fn attempt_sync<R, F: FnOnce() -> R>(f: F) -> R {
    f()
}

/// Marks the path that calls it as unlikely (the failure path): the
/// expansion's stand-in for `core::hint::cold_path`, which is newer than the
/// oldest Rust the generated code supports (1.85).
#[cold]
#[inline(never)]
pub fn cold() {}

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
        DefaultSleeping {
            sleep: ::tokio::time::sleep(d),
        }
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

#[diagnostic::do_not_recommend]
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

#[diagnostic::do_not_recommend]
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

/// The error type of a function behind `circuit = ...`.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: with `circuit`, the error type `{Self}` must implement `From<backoff_runtime::CircuitOpen>`",
    label = "no `From<CircuitOpen>` for `{Self}`",
    note = "an open breaker fails calls fast with `E::from(CircuitOpen)`: give your error type an `impl From<CircuitOpen>` (`std::io::Error` and `Box<dyn Error + Send + Sync>` have one); another crate's error type cannot get one in your crate, so return an enum of yours with a variant for it and one for `CircuitOpen`, as in the docs of `backoff_runtime::CircuitOpen`"
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
    note = "a timed-out call fails with `E::from(Elapsed)`: give your error type an `impl From<Elapsed>` (`std::io::Error` and `Box<dyn Error + Send + Sync>` have one); another crate's error type cannot get one in your crate, so return an enum of yours with a variant for it and one for `Elapsed`, as in the docs of `backoff_runtime::Elapsed`"
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

/// The traits of this module under the names rustc prints when a value does
/// not fit: the crate root re-exports this module, hidden, as
/// `retry_args`, so an error names `WhenParameter<'_, u32>` or
/// `backoff_runtime::retry_args::WhenParameter`, never a path through
/// `__private`, and each name reads as the argument it checks.
pub mod args {
    pub use super::{
        AsBudget as BudgetArgument, AsCircuit as CircuitArgument, AsPolicy as PolicyArgument,
        AsyncSleep as DefaultAsyncSleep, AsyncSleepReturn, AsyncTimeout as TimeoutTimer,
        BlockingSleepReturn, DefaultSleep as TokioFeature, FromCircuitOpen, FromElapsed,
        OnGiveupFn, OnGiveupParameter, OnGiveupRecordParameter, OnGiveupReturn,
        OnRetryEventParameter, OnRetryFn, OnRetryOutcomeParameter, OnRetryParameter, OnRetryReturn,
        RetryResult as ReturnsResult, SleepFn, SleepParameter, WhenFn, WhenOkFn, WhenOkParameter,
        WhenOkReturn, WhenParameter,
    };
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

/// The failure path's decision, for a loop that keeps the outcome itself:
/// the state is built from `start` on the first failure, then asked for
/// the delay after this one, given the verdict on the outcome.
/// `Some(delay)`: sleep, then try again; `None`: give up (the state in
/// `slot` then has the report).
///
/// Out of line and generic only over the strategy (one copy per strategy
/// in a crate, not one per function), it never owns the outcome: the loop
/// moves nothing in and nothing back, and the function holding the loop
/// keeps no frame for the failure path. A plain retry costs what
/// [`RetryState::next_delay_for`]'s common path costs, plus a call.
///
/// `#[cold]`: the branch that calls it, a failed attempt, is the unlikely
/// one, and the compiler lays out the success path straight.
#[cold]
#[inline(never)]
pub fn next_delay<'p, S: Strategy>(
    slot: &mut Option<RetryState<'p, S>>,
    start: &Start<'p, S>,
    decision: Decision,
) -> Option<Duration> {
    step(slot, start, decision)
}

/// The step of [`next_delay`], [`next_retry`] and [`next_retry_fixed`]:
/// the state, built from `start` if this is the first failure, asked for
/// the delay.
#[inline(always)]
fn step<'p, S: Strategy>(
    slot: &mut Option<RetryState<'p, S>>,
    start: &Start<'p, S>,
    decision: Decision,
) -> Option<Duration> {
    slot.get_or_insert_with(|| start.state())
        .next_delay_for(decision)
}

/// [`next_delay`] with the verdict [`Decision::Retry`] (no `when`): the
/// verdict is a constant here, and the step's common path is a comparison
/// and the strategy's delay.
#[cold]
#[inline(never)]
pub fn next_retry<'p, S: Strategy>(
    slot: &mut Option<RetryState<'p, S>>,
    start: &Start<'p, S>,
) -> Option<Duration> {
    step(slot, start, Decision::Retry)
}

/// [`next_retry`] for a policy the attribute named by a type: the policy's
/// address is a constant of this function (one copy per policy in a crate),
/// not an argument the loop keeps in a register across its calls.
#[cold]
#[inline(never)]
pub fn next_retry_fixed<'p, F: FixedStart>(
    slot: &mut Option<RetryState<'p, F::Strategy>>,
) -> Option<Duration> {
    // (A breaker borrowed for `'p` makes the state's lifetime `'p`.)
    step(slot, F::START, Decision::Retry)
}

/// [`next_retry_fixed`] for a loop that keeps a [`Carried`] between
/// attempts (an `async fn`'s, whose future it keeps small): the step of
/// [`after_carried`], out of line, one copy per policy.
#[cold]
#[inline(never)]
fn next_retry_carried<F: FixedStart>(carried: &mut Carried<F::Previous>) -> Option<Duration> {
    F::START.policy.next_carried(carried)
}

/// After an attempt of an `async fn` whose policy is the type `P` and that
/// keeps a [`Carried`] between attempts: `Break` with what the function
/// returns (the success, or the error it gives up with), or `Continue` with
/// the delay to sleep before the next attempt. The error of an attempt that
/// is retried is dropped here, before the sleep.
///
/// (The function's loop calls this rather than stepping itself: its
/// `async fn` then has one match to check and lay out, not the failure
/// path's matches and returns.)
#[inline(always)]
pub fn after_carried<P: FixedStart, T, E>(
    carried: &mut Carried<P::Previous>,
    trace: impl Trace<E>,
    outcome: Result<T, E>,
) -> ControlFlow<Result<T, E>, Duration> {
    match outcome {
        Ok(value) => ControlFlow::Break(Ok(value)),
        Err(error) => match next_retry_carried::<P>(carried) {
            Some(delay) => {
                trace.retry(&error, carried.attempt(), delay);
                ControlFlow::Continue(delay)
            }
            None => {
                trace.give_up(&error, || carried.report());
                ControlFlow::Break(Err(error))
            }
        },
    }
}

/// Never called: `if false { return outcome_type::<R>(); }`, first in an
/// attempt's async block, gives the block its output type `R` before its
/// body is checked (a `return` of the wrong type in the body is then one
/// error, at that `return`). It is cheaper for rustc to check than the
/// `if let Some(r) = None::<R> { return r; }` that `async-trait` writes.
#[inline(always)]
pub fn outcome_type<R>() -> R {
    unreachable!("`outcome_type` is never called")
}

/// What a trace shows of `error: &E` (through `Display` when `E` has it,
/// see [`TraceError`]) or of `outcome: &Result<T, E>` (an `Ok` that
/// `when_ok` rejected is named as such): a `&dyn Display`.
#[cfg(feature = "tracing")]
#[doc(hidden)]
#[macro_export]
macro_rules! __backoff_shown {
    (error: $error:expr) => {{
        #[allow(unused_imports)]
        use $crate::__private::{TraceDisplay as _, TraceFallback as _};
        (&$crate::__private::TraceError($error)).trace_display()
    }};
    (outcome: $outcome:expr) => {
        $crate::__private::shown($outcome, |__backoff_error| {
            $crate::__backoff_shown!(error: __backoff_error)
        })
    };
}

/// Traces a retry to `tracing` (feature `tracing`) with the function's
/// name, the error (`error: &E`) or the outcome `when_ok` rejected
/// (`outcome: &Result<T, E>`), the attempt that failed and the delay.
/// Without the feature it expands to nothing: the generated code has no
/// trace to type-check.
#[cfg(feature = "tracing")]
#[doc(hidden)]
#[macro_export]
macro_rules! __backoff_traced_retry {
    ($name:expr, $kind:ident: $shown:expr, $attempt:expr, $delay:expr) => {
        $crate::__private::trace_retry(
            $name,
            $crate::__backoff_shown!($kind: $shown),
            $attempt,
            $delay,
        );
    };
}

/// Without the `tracing` feature: nothing.
#[cfg(not(feature = "tracing"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __backoff_traced_retry {
    ($($ignored:tt)*) => {};
}

/// Traces giving up (feature `tracing`) with the function's name, the
/// error (`error: &E`) or the outcome returned (`outcome: &Result<T, E>`)
/// and the report. Without the feature it expands to nothing.
#[cfg(feature = "tracing")]
#[doc(hidden)]
#[macro_export]
macro_rules! __backoff_traced_give_up {
    ($name:expr, $kind:ident: $shown:expr, $report:expr) => {
        $crate::__private::trace_give_up($name, $crate::__backoff_shown!($kind: $shown), $report);
    };
}

/// Without the `tracing` feature: nothing.
#[cfg(not(feature = "tracing"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __backoff_traced_give_up {
    ($($ignored:tt)*) => {};
}

pub use crate::__backoff_traced_give_up as traced_give_up;
pub use crate::__backoff_traced_retry as traced_retry;

/// What a loop the runtime runs for the attribute reports to `tracing`:
/// [`NoTrace`] without the `tracing` feature (nothing, at no cost), else
/// `Traced` (which exists only with that feature, so it is not linked
/// here), the function's name and how to show its error.
pub trait Trace<E> {
    /// A retry was granted after `error`, the failure of attempt `attempt`.
    fn retry(&self, error: &E, attempt: u32, delay: Duration);
    /// The call gives up with `error`; `report` is called only by a trace
    /// that shows it (a report may read the clock).
    fn give_up(&self, error: &E, report: impl FnOnce() -> GiveUp);
}

/// No traces (see [`Trace`]).
#[derive(Clone, Copy)]
pub struct NoTrace;

impl<E> Trace<E> for NoTrace {
    #[inline(always)]
    fn retry(&self, _: &E, _: u32, _: Duration) {}
    #[inline(always)]
    fn give_up(&self, _: &E, _: impl FnOnce() -> GiveUp) {}
}

/// Traces to `tracing` (see [`Trace`]): the function's name, and its
/// error's `Display` (or a placeholder for an error without one, chosen
/// where the error's type is known).
#[cfg(feature = "tracing")]
pub struct Traced<E> {
    /// The function's name.
    pub name: &'static str,
    /// Shows an error.
    pub show: for<'a> fn(&'a E) -> &'a dyn core::fmt::Display,
}

#[cfg(feature = "tracing")]
impl<E> Traced<E> {
    /// The trace of the function `name`, made where `result`, an attempt's
    /// outcome, gives the error's type.
    #[inline(always)]
    pub fn of_result<T>(
        name: &'static str,
        result: &Result<T, E>,
        show: for<'a> fn(&'a E) -> &'a dyn core::fmt::Display,
    ) -> Self {
        let _ = result;
        Traced { name, show }
    }
}

#[cfg(feature = "tracing")]
impl<E> Trace<E> for Traced<E> {
    #[inline]
    fn retry(&self, error: &E, attempt: u32, delay: Duration) {
        trace_retry(self.name, (self.show)(error), attempt, delay);
    }
    #[inline]
    fn give_up(&self, error: &E, report: impl FnOnce() -> GiveUp) {
        trace_give_up(self.name, (self.show)(error), &report());
    }
}

/// The [`Trace`] of a function named `$name` whose attempts are
/// `$attempts` (a `&impl FnMut() -> R`, whose `R` gives the error's type),
/// or made after an attempt whose outcome is `result: &Result<T, E>`:
/// [`Traced`] with the `tracing` feature, else [`NoTrace`].
#[cfg(feature = "tracing")]
#[doc(hidden)]
#[macro_export]
macro_rules! __backoff_tracer {
    ($name:expr, result: $result:expr) => {
        $crate::__private::Traced::of_result($name, $result, |__backoff_error| {
            $crate::__backoff_shown!(error: __backoff_error)
        })
    };
    ($name:expr, $attempts:expr) => {
        $crate::__private::RetryResult::traced($name, $attempts, |__backoff_error| {
            $crate::__backoff_shown!(error: __backoff_error)
        })
    };
}

/// Without the `tracing` feature: [`NoTrace`].
#[cfg(not(feature = "tracing"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __backoff_tracer {
    ($($ignored:tt)*) => {
        $crate::__private::NoTrace
    };
}

pub use crate::__backoff_tracer as tracer;
