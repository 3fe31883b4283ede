//! The cold steps the expansion's loop calls after a failed attempt, over
//! the driver, and the small pieces of glue its attempts and sleeps need.

use super::*;
use crate::driver;
use crate::recording::{CompactRecording, NoRecording};

/// The call's start, read before the first attempt only if something needs
/// the time (`timed`, or a deadline); the state itself is built on the first
/// failure, so a success builds nothing.
#[inline]
pub fn began<S>(policy: &Policy<S>, clock: Clock, timed: bool) -> Option<std::time::Instant> {
    driver::began(policy, clock, timed)
}

/// The state machine of a call that began at `start`.
#[inline]
pub fn state_from<S>(
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

/// The report of a state that gave up.
#[inline]
pub fn report<S>(state: &RetryState<'_, S>) -> GiveUp {
    state.report()
}

/// The report of the state in `slot`, which gave up: [`next_delay`] returned
/// `None`, so it holds one (an empty slot, which the loop never passes, is a
/// call that gave up before any attempt).
#[inline]
pub fn report_of<S>(slot: &Option<RetryState<'_, S>>) -> GiveUp {
    match slot {
        Some(state) => state.report(),
        None => GiveUp::new(0, Duration::ZERO, GiveUpReason::Attempts),
    }
}

/// A success with a budget and no breaker: the state, if a failure built
/// it, reports it (and deposits); else the budget is paid directly, and no
/// state is built for a call that succeeded at once.
#[inline]
pub fn succeeded_with_budget<S>(slot: &mut Option<RetryState<'_, S>>, budget: &RetryBudget) {
    driver::succeeded(slot, Some(budget));
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

#[cfg(feature = "tokio")]
pin_project_lite::pin_project! {
    /// The default sleep of an `async fn`: tokio's timer, held in the
    /// function's future by value, and polled through a poll function of
    /// its own, so that the function's own poll, all that the success path
    /// runs, stays small enough for the compiler to inline into its caller.
    pub struct DefaultSleeping {
        #[pin]
        pub(super) sleep: ::tokio::time::Sleep,
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
    start: &Origin<'p, S>,
    decision: Decision,
) -> Option<Duration> {
    driver::step(slot, start, decision)
}

/// [`next_delay`] with the verdict [`Decision::Retry`] (no `when`): the
/// verdict is a constant here, and the step's common path is a comparison
/// and the strategy's delay.
#[cold]
#[inline(never)]
pub fn next_retry<'p, S: Strategy>(
    slot: &mut Option<RetryState<'p, S>>,
    start: &Origin<'p, S>,
) -> Option<Duration> {
    driver::step(slot, start, Decision::Retry)
}

/// [`next_delay`], recording the attempt that failed (an error, or with
/// `rejected_ok` an `Ok` that `when_ok` rejected) and the retry's delay, or
/// the call's end and the reason it gave up, in `recording` (nothing, at
/// the cost of a test, while no recorder is installed).
#[cold]
#[inline(never)]
pub fn next_delay_recorded<'p, S: Strategy>(
    slot: &mut Option<RetryState<'p, S>>,
    start: &Origin<'p, S>,
    decision: Decision,
    recording: &mut Recording,
    rejected_ok: bool,
) -> Option<Duration> {
    let delay = driver::step(slot, start, decision);
    record(slot, delay, recording, rejected_ok);
    delay
}

/// [`next_retry`], recording as [`next_delay_recorded`] does (the
/// attempt failed with an error).
#[cold]
#[inline(never)]
pub fn next_retry_recorded<'p, S: Strategy>(
    slot: &mut Option<RetryState<'p, S>>,
    start: &Origin<'p, S>,
    recording: &mut Recording,
) -> Option<Duration> {
    let delay = driver::step(slot, start, Decision::Retry);
    record(slot, delay, recording, false);
    delay
}

/// [`next_retry_fixed`], recording as [`next_delay_recorded`] does (the
/// attempt failed with an error).
#[cold]
#[inline(never)]
pub fn next_retry_fixed_recorded<'p, F: FixedOrigin>(
    slot: &mut Option<RetryState<'p, F::Strategy>>,
    recording: &mut Recording,
) -> Option<Duration> {
    let delay = driver::step(slot, F::ORIGIN, Decision::Retry);
    record(slot, delay, recording, false);
    delay
}

/// Records a step's result: a retry after `delay`, or the call's end.
#[inline(always)]
fn record<S>(
    slot: &Option<RetryState<'_, S>>,
    delay: Option<Duration>,
    recording: &mut Recording,
    rejected_ok: bool,
) {
    if !recording.is_live() {
        return;
    }
    match delay {
        Some(delay) => recording.retried(rejected_ok, delay),
        None => {
            let reason = slot
                .as_ref()
                .and_then(RetryState::give_up_reason)
                .unwrap_or(GiveUpReason::Attempts);
            recording.gave_up(Some(rejected_ok), reason);
        }
    }
}

/// [`next_retry`] for a policy the attribute named by a type: the policy's
/// address is a constant of this function (one copy per policy in a crate),
/// not an argument the loop keeps in a register across its calls.
#[cold]
#[inline(never)]
pub fn next_retry_fixed<'p, F: FixedOrigin>(
    slot: &mut Option<RetryState<'p, F::Strategy>>,
) -> Option<Duration> {
    // (A breaker borrowed for `'p` makes the state's lifetime `'p`.)
    driver::step(slot, F::ORIGIN, Decision::Retry)
}

/// [`next_retry_fixed`] for a loop that keeps a [`Carried`] between
/// attempts (an `async fn`'s, whose future it keeps small): the step of
/// [`after_carried`], out of line, one copy per policy.
#[cold]
#[inline(never)]
fn next_retry_carried<F: FixedOrigin>(carried: &mut Carried<F::Previous>) -> Option<Duration> {
    F::ORIGIN.policy.next_carried(carried)
}

/// [`next_retry_carried`] for a verdict other than a plain retry (a `when`
/// said `Stop`, `RetryAfter` or `Throttled`), out of line, one copy per
/// policy.
#[cold]
#[inline(never)]
fn next_decided_carried<F: FixedOrigin>(
    carried: &mut Carried<F::Previous>,
    decision: Decision,
) -> Option<Duration> {
    F::ORIGIN.policy.next_carried_for(carried, decision)
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
pub fn after_carried<P: FixedOrigin, T, E>(
    carried: &mut Carried<P::Previous>,
    trace: impl Trace<E>,
    outcome: Result<T, E>,
) -> ControlFlow<Result<T, E>, Duration> {
    driver::after_attempt(
        &mut Compact::<P>(carried),
        outcome,
        &mut driver::NoHooks,
        &trace,
        &mut NoRecording,
    )
}

/// [`after_carried`], recording the attempt, the retry's delay and the
/// call's end: `began` is the call's start
/// (`CallBegan::begin()` before the loop), `attempt` this
/// attempt's (`began.attempt(ASYNC_CLOCK)` before it), `function` the
/// call's name.
#[inline(always)]
pub fn after_carried_recorded<P: FixedOrigin, T, E>(
    carried: &mut Carried<P::Previous>,
    began: &CallBegan,
    attempt: AttemptBegan,
    function: &'static str,
    trace: impl Trace<E>,
    outcome: Result<T, E>,
) -> ControlFlow<Result<T, E>, Duration> {
    // (With no `when`, every error is retried: the verdict is a constant,
    // and `Compact`'s step folds to the plain retry.)
    after_carried_recorded_decided::<P, T, E>(
        carried,
        began,
        attempt,
        function,
        trace,
        outcome,
        Decision::Retry,
    )
}

/// [`after_carried_recorded`] with `when`'s verdict on the outcome's
/// error, taken before the outcome was handed over (ignored for an `Ok`).
#[inline(always)]
pub fn after_carried_recorded_decided<P: FixedOrigin, T, E>(
    carried: &mut Carried<P::Previous>,
    began: &CallBegan,
    attempt: AttemptBegan,
    function: &'static str,
    trace: impl Trace<E>,
    outcome: Result<T, E>,
    decision: Decision,
) -> ControlFlow<Result<T, E>, Duration> {
    let attempts = carried.attempt();
    driver::after_attempt(
        &mut Compact::<P>(carried),
        outcome,
        &mut driver::Decided(decision),
        &trace,
        &mut CompactRecording {
            function,
            clock: P::ORIGIN.clock,
            began,
            attempt,
            attempts,
        },
    )
}

/// After an attempt of an `async fn` whose only hook is `when` (or none)
/// but whose state is a whole [`RetryState`] (a deadline, `policy = ..`,
/// `throttled`, `retry_after_max`): as [`after_carried_recorded_decided`],
/// for a loop that keeps its state in `slot`, built from `start` on the
/// first failure, and records into `recording`. `decision` is `when`'s
/// verdict on the outcome's error, taken before the outcome was handed over
/// (ignored for an `Ok`), or [`Decision::Retry`] without a `when`.
#[inline(always)]
pub fn after_decided_recorded<'p, S: Strategy, T, E>(
    slot: &mut Option<RetryState<'p, S>>,
    start: &Origin<'p, S>,
    recording: &mut Recording,
    trace: impl Trace<E>,
    outcome: Result<T, E>,
    decision: Decision,
) -> ControlFlow<Result<T, E>, Duration> {
    driver::after_attempt(
        &mut driver::Lazy { slot, start },
        outcome,
        &mut driver::Decided(decision),
        &trace,
        recording,
    )
}

/// The driver's progress of a loop that keeps a [`Carried`] under the
/// policy type `P`: no start time, budget or breaker, so an accepted
/// outcome tells no one.
struct Compact<'a, P: FixedOrigin>(&'a mut Carried<P::Previous>);

impl<P: FixedOrigin> driver::Progress for Compact<'_, P> {
    #[inline(always)]
    fn step(&mut self, decision: Decision) -> Option<Duration> {
        // (Without a `when`, every error is retried: the branch folds away.)
        match decision {
            Decision::Retry => next_retry_carried::<P>(self.0),
            decision => next_decided_carried::<P>(self.0, decision),
        }
    }

    #[inline(always)]
    fn succeeded(&mut self) {}

    #[inline(always)]
    fn attempt(&self) -> u32 {
        self.0.attempt()
    }

    fn event(&self, delay: Duration) -> RetryEvent {
        RetryEvent::new(self.0.attempt(), delay, Duration::ZERO)
    }

    fn report(&self) -> GiveUp {
        self.0.report()
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
