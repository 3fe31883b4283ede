//! The driver: what happens after an attempt, written once.
//!
//! After each attempt a loop asks, in this order:
//!
//! 1. the verdict: `when` on an error, `when_ok` on an `Ok` (which accepts
//!    it unless it says otherwise); an accepted `Ok` tells the breaker and
//!    refills the budget ([`Progress::succeeded`]) and ends the call;
//! 2. the step ([`Progress::step`], out of line): the attempt limit, the
//!    schedule (or a server's `RetryAfter`, bounded), the deadline, the
//!    breaker and the budget, in that order, give the delay or the reason
//!    to give up;
//! 3. on a retry: `on_retry` with the outcome and the [`RetryEvent`], the
//!    trace, then the outcome is dropped, before the sleep;
//! 4. on giving up: the [`GiveUp`] report (built only for what reads it),
//!    the trace, `on_giveup`, and the outcome is returned unchanged.
//!
//! [`after_attempt`] is that rule, and [`give_up`] its give-up step. Every
//! loop ends each attempt there:
//!
//! - [`Policy::retry`](crate::Policy::retry) and a plain fn under
//!   `#[retry]` whose only hook, if any, is a `when` that borrows nothing
//!   (the shared blocking loop, `loops.rs`);
//! - [`Policy::retry_async`](crate::Policy::retry_async),
//!   [`retry_async_with_sleep`](crate::Policy::retry_async_with_sleep) and
//!   [`Policy::retrying`](crate::Policy::retrying) and its async form;
//! - the attribute's function's own loop: `__private::Call::after_error`
//!   (or `after` beside `when_ok`, `*_hooked` with an `on_retry`) after
//!   each attempt, handing the driver the one adapter of hooks
//!   ([`HookSet`](crate::hooks::HookSet)), `Call::refused` for a breaker's
//!   refusal or a throttle's rejection, `Call::timed_out` for `timeout`;
//!   `on_giveup` and `fallback` run once, after the loop, on the report the
//!   give-up step kept (`Ended::finish`). An `async fn` that keeps nothing
//!   but its attempt count writes the same loop over a
//!   `__private::Call` in its compact form (the same steps over a `Carried`);
//! - the `tower` policy, which never owns the outcome, takes the verdict
//!   and the step;
//! - a [hedged call](crate::Hedge), whose attempts overlap, ends each
//!   attempt in `Call::ended` and grants each hedge in its `poll` (both in
//!   `hedge/call.rs`): the same verdict ([`verdict!`]) and the
//!   same step (attempt limit, deadline, breaker, budget), with a failure
//!   that is not the last one in flight dropped rather than given up with.
//!
//! The attribute's expansion keeps its own loop, so that `?`, `return` and
//! each attempt's reborrows work; its `when` and `when_ok` are called where
//! a loop written by hand calls them, and `on_retry` is a closure built at
//! the call into the driver, so a borrow of `self` or of an argument it
//! makes ends with that call.

use core::ops::ControlFlow;
use core::time::Duration;
use std::time::Instant;

use crate::budget::RetryBudget;
use crate::circuit::CircuitBreaker;
use crate::clock::Clock;
use crate::decision::Decision;
use crate::event::{RetryEvent, SuccessEvent};
use crate::policy::Policy;
use crate::record::Records;
use crate::report::{GiveUp, GiveUpReason};
use crate::state::RetryState;
use crate::strategy::Strategy;
use crate::throttle::AdaptiveThrottle;

pub(crate) use crate::state::{began, since};

/// What a call's retry state is built from, on its first failure: the
/// policy, the loop's clock, the call's start (if read) and the budget (if
/// any). A call behind a breaker or a throttle builds its state before its
/// first attempt, with them, so they are not kept here. For a policy the attribute built, with no start time
/// or budget, it is a constant (`Fixed::ORIGIN`, or the `static` the
/// attribute writes for `throttled` and `retry_after_max`), so the failure
/// path passes one address, or none.
pub struct Origin<'p, S> {
    /// The policy.
    pub policy: &'p Policy<S>,
    pub(crate) clock: Clock,
    /// The call's start, if read.
    pub(crate) began: Option<Instant>,
    pub(crate) budget: Option<&'p RetryBudget>,
}

impl<'p, S> Origin<'p, S> {
    /// A policy and a clock: no start time, no budget.
    pub const fn new(policy: &'p Policy<S>, clock: Clock) -> Self {
        Origin::at(policy, clock, None, None)
    }

    /// A policy, a clock, the call's start and a budget.
    #[inline(always)]
    pub const fn at(
        policy: &'p Policy<S>,
        clock: Clock,
        began: Option<Instant>,
        budget: Option<&'p RetryBudget>,
    ) -> Self {
        Origin {
            policy,
            clock,
            began,
            budget,
        }
    }

    /// The call's deadline before its state is built: its policy's
    /// `max_elapsed` after its start.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.began
            .zip(self.policy.elapsed_limit())
            .and_then(|(began, limit)| began.checked_add(limit))
    }

    /// The context of attempt `attempt` of a call whose state no failure
    /// has built (a hedged call's attempts too).
    pub(crate) fn context(&self, attempt: u32) -> crate::event::AttemptContext {
        let last = self.policy.is_last_attempt(attempt);
        let context = crate::event::AttemptContext::new(attempt, last);
        match self.deadline() {
            Some(deadline) => context.with_deadline(Some(deadline), (self.clock)()),
            None => context,
        }
    }

    /// What `on_success` is told of a call whose state (if a failure built
    /// it) is `state`: its attempts, the one that succeeded included, and
    /// the time since it began.
    pub(crate) fn success(&self, state: Option<&RetryState<'p, S>>) -> SuccessEvent {
        let attempts = state.map_or(0, RetryState::attempt).saturating_add(1);
        SuccessEvent::new(attempts, self.elapsed())
    }

    /// The state of a call that has just failed for the first time (or,
    /// behind a breaker or a throttle, which the caller adds, is about to
    /// make its first attempt).
    #[inline]
    pub(crate) fn state(&self) -> RetryState<'p, S> {
        self.gated(None, None)
    }

    /// The state of a call behind a breaker or a throttle (if any), built
    /// before its first attempt, which they admit.
    #[inline(always)]
    pub(crate) fn gated(
        &self,
        circuit: Option<&'p CircuitBreaker>,
        throttle: Option<&'p AdaptiveThrottle>,
    ) -> RetryState<'p, S> {
        let mut state = RetryState::starting_at(self.policy, self.clock, self.began);
        if let Some(budget) = self.budget {
            state = state.with_budget(budget);
        }
        if let Some(circuit) = circuit {
            state = state.with_circuit(circuit);
        }
        if let Some(throttle) = throttle {
            state = state.with_throttle(throttle);
        }
        state
    }

    /// Time since the call began: zero if nothing read the start.
    pub(crate) fn elapsed(&self) -> Duration {
        since(self.clock, self.began)
    }
}

/// The report of a call that ran past its whole-call `timeout` after `calls`
/// attempts began, `start` being its start (if read).
#[cold]
pub fn timeout_report(calls: u32, clock: Clock, start: Option<Instant>) -> GiveUp {
    GiveUp::new(calls, since(clock, start), GiveUpReason::Timeout)
}

/// A call's progress, as the driver steps it: a [`RetryState`] built on the
/// first failure ([`Lazy`]), or the attribute's 8-byte compact form (see
/// `Carried`).
pub(crate) trait Progress {
    /// After a failed attempt (or an `Ok` to retry), given the verdict: the
    /// delay before the next attempt, or `None` to give up.
    fn step(&mut self, decision: Decision) -> Option<Duration>;
    /// An attempt was accepted: the breaker and the budget hear of it
    /// (the compact form has neither).
    #[inline(always)]
    fn succeeded(&mut self) {}
    /// The event of the retry just granted with `delay`.
    fn event(&self, delay: Duration) -> RetryEvent;
    /// The report of a call that gave up.
    fn report(&self) -> GiveUp;
    /// The report of a call that gives up because its `cancel` token was
    /// cancelled: reason [`Cancelled`](GiveUpReason::Cancelled).
    #[cold]
    fn cancelled(&self) -> GiveUp {
        let mut report = self.report();
        report.reason = GiveUpReason::Cancelled;
        report
    }
}

/// The progress of a loop that keeps its state in `slot`, built from
/// `start` when first needed.
pub(crate) struct Lazy<'a, 'p, S> {
    /// The state, once built.
    pub(crate) slot: &'a mut Option<RetryState<'p, S>>,
    /// What it is built from.
    pub(crate) start: &'a Origin<'p, S>,
}

impl<S: Strategy> Progress for Lazy<'_, '_, S> {
    #[inline]
    fn step(&mut self, decision: Decision) -> Option<Duration> {
        // (The state built from `start` if this is the first failure.)
        let start = self.start;
        self.slot
            .get_or_insert_with(|| start.state())
            .next_delay_for(decision)
    }

    #[inline(always)]
    fn succeeded(&mut self) {
        succeeded(self.slot, self.start.budget);
    }

    fn event(&self, delay: Duration) -> RetryEvent {
        match self.slot.as_ref() {
            Some(state) => state.event(delay),
            None => RetryEvent::new(0, delay, self.start.elapsed()),
        }
    }

    fn report(&self) -> GiveUp {
        match self.slot.as_ref() {
            Some(state) => state.report(),
            // (A call that gave up before a state was built: refused by a
            // breaker before its first attempt.)
            None => GiveUp::new(0, self.start.elapsed(), GiveUpReason::Attempts),
        }
    }
}

/// An accepted attempt: the state, if a failure built it, reports it (to
/// the breaker, and deposits); else the budget is paid directly, and a call
/// that succeeded at once builds no state.
#[inline]
pub(crate) fn succeeded<S>(slot: &mut Option<RetryState<'_, S>>, budget: Option<&RetryBudget>) {
    match (slot, budget) {
        (Some(state), _) => state.on_success(),
        (None, Some(budget)) => budget.deposit(),
        (None, None) => {}
    }
}

/// A loop's hooks, as the driver calls them (their one adapter is
/// [`HookSet`](crate::hooks::HookSet), whose unset hooks retry every error,
/// accept every `Ok` and tell nothing).
pub(crate) trait Hooks<T, E> {
    /// Whether there is an `on_retry` (the event is built only if so).
    const ON_RETRY: bool;
    /// Whether there is an `on_hedge` (the same).
    #[cfg(feature = "tokio")]
    const ON_HEDGE: bool;
    /// Whether a hook reads the [`GiveUp`] report.
    const REPORTS: bool;
    /// The verdict on an error.
    fn when(&mut self, error: &E) -> Decision;
    /// The verdict on an `Ok` value: [`Decision::Stop`] accepts it.
    fn when_ok(&mut self, value: &T) -> Decision;
    /// A retry was granted after `outcome`.
    fn on_retry(&mut self, outcome: &Result<T, E>, event: &RetryEvent);
    /// A hedged call's hedge was granted by its delay, no attempt having
    /// ended (`event.kind` is
    /// [`AttemptKind::Hedge`](crate::AttemptKind::Hedge)).
    #[cfg(feature = "tokio")]
    fn on_hedge(&mut self, event: &RetryEvent);
    /// The call gives up with `outcome`.
    fn on_give_up(&mut self, outcome: &Result<T, E>, report: &GiveUp);
    /// The call's result when it gives up with `outcome`, after
    /// `on_give_up` (a fallback's; only called if [`REPORTS`](Hooks::REPORTS)).
    fn fall_back(&mut self, outcome: Result<T, E>, report: &GiveUp) -> Result<T, E>;
}

/// What a loop reports to `tracing`: [`NoTrace`] without the `tracing`
/// feature (nothing, at no cost), else the attribute's `Traced`, the
/// function's name and how to show its error.
pub trait Trace<E> {
    /// Whether anything is traced (the report is built only if so).
    const ENABLED: bool = true;
    /// A retry was granted after `error`, as `event` tells (the attempt
    /// that failed, the delay, the failure's kind for a policy with kinds).
    fn retry(&self, error: &E, event: &RetryEvent);
    /// The call gives up with `error`, for `report`.
    fn give_up(&self, error: &E, report: &GiveUp);
}

/// No traces (see [`Trace`]): `()`, as the attribute's expansion writes it
/// without the `tracing` feature (two tokens).
#[allow(non_upper_case_globals)]
pub const NoTrace: () = ();

impl<E> Trace<E> for () {
    const ENABLED: bool = false;
    #[inline(always)]
    fn retry(&self, _: &E, _: &RetryEvent) {}
    #[inline(always)]
    fn give_up(&self, _: &E, _: &GiveUp) {}
}

/// The verdict on an attempt's `outcome` (`when` on an error, `when_ok` on
/// an `Ok`): the decision and the outcome; or, for an accepted `Ok`, which
/// the breaker, the budget and the recording then hear of, `return
/// $accepted(Ok(value))`. (A macro: the same code as a function, even
/// inlined, cost 12 instructions more per retry of the blocking loop with
/// a `when`, measured.)
macro_rules! verdict {
    ($progress:expr, $outcome:expr, $hooks:expr, $recording:expr, $accepted:expr) => {
        match $outcome {
            Ok(value) => match $hooks.when_ok(&value) {
                Decision::Stop => {
                    $progress.succeeded();
                    $recording.succeeded();
                    return $accepted(Ok(value));
                }
                decision => (decision, Ok(value)),
            },
            Err(error) => ($hooks.when(&error), Err(error)),
        }
    };
}
#[cfg(feature = "tokio")] // (`hedge` uses it by path; `driver` by name.)
pub(crate) use verdict;

/// An answer that kept nothing of the outcome, as its delay alone.
#[inline(always)]
pub(crate) fn unit<B>(flow: ControlFlow<B, (Duration, ())>) -> ControlFlow<B, Duration> {
    match flow {
        ControlFlow::Continue((delay, ())) => ControlFlow::Continue(delay),
        ControlFlow::Break(ended) => ControlFlow::Break(ended),
    }
}

/// What a loop keeps of a retry's outcome across its sleep, beside its
/// delay (the loop's use of the answer says which): nothing (`()`: a
/// loop's future never holds a failed attempt's error across the sleep),
/// or the outcome, which a loop with a `cancel` token returns if the sleep
/// is cancelled.
pub(crate) trait Keep<T, E> {
    /// What is kept of `outcome`.
    fn keep(outcome: Result<T, E>) -> Self;
}

impl<T, E> Keep<T, E> for () {
    #[inline(always)]
    fn keep(_: Result<T, E>) {}
}

impl<T, E> Keep<T, E> for Result<T, E> {
    #[inline(always)]
    fn keep(outcome: Result<T, E>) -> Self {
        outcome
    }
}

/// After an attempt: `Break` with what the call returns (an accepted
/// outcome, or the one it gives up with), or `Continue` with the delay to
/// sleep before the next attempt, the outcome already dropped (or kept
/// beside the delay, see [`Keep`]).
#[inline(always)]
pub(crate) fn after_attempt<T, E, H: Hooks<T, E>, R: Trace<E>, M: Records, K: Keep<T, E>>(
    progress: &mut impl Progress,
    outcome: Result<T, E>,
    hooks: &mut H,
    trace: &R,
    recording: &mut M,
) -> ControlFlow<Result<T, E>, (Duration, K)> {
    let (decision, outcome) = verdict!(progress, outcome, hooks, recording, ControlFlow::Break);
    match progress.step(decision) {
        Some(delay) => {
            recording.retried(outcome.is_ok(), delay);
            // (The event built only for a hook or a trace: `NoHook` and `()`
            // tell nothing.)
            if H::ON_RETRY || R::ENABLED {
                let event = progress.event(delay);
                hooks.on_retry(&outcome, &event);
                if let Err(error) = &outcome {
                    trace.retry(error, &event);
                }
            }
            // (Dropped here, before the sleep, unless kept for a cancel.)
            ControlFlow::Continue((delay, K::keep(outcome)))
        }
        None => {
            let (ended, report) = (Some(outcome.is_ok()), || progress.report());
            ControlFlow::Break(give_up(report, outcome, hooks, trace, recording, ended))
        }
    }
}

/// The call gives up with `outcome`: the `report`, built only if a hook,
/// the trace or the recording read it, the trace, the recording (`ended`: whether
/// an attempt just ended, with a rejected `Ok`; see
/// [`Records::gave_up`](crate::record::Records::gave_up)), `on_giveup`;
/// then the outcome, unchanged.
#[inline]
pub(crate) fn give_up<T, E, H: Hooks<T, E>, R: Trace<E>, M: Records>(
    report: impl FnOnce() -> GiveUp,
    outcome: Result<T, E>,
    hooks: &mut H,
    trace: &R,
    recording: &mut M,
    ended: Option<bool>,
) -> Result<T, E> {
    if H::REPORTS || R::ENABLED || recording.is_live() {
        let report = report();
        recording.gave_up(ended, report.reason, report.failure_kind);
        if let Err(error) = &outcome {
            trace.give_up(error, &report);
        }
        hooks.on_give_up(&outcome, &report);
        return hooks.fall_back(outcome, &report);
    }
    outcome
}
