//! The hedged steps: what the driver does after an attempt of a
//! [hedged call](crate::hedge), whose attempts overlap, and when its delay
//! runs out.
//!
//! [`after_hedged_attempt`] is [`after_attempt`](super::after_attempt)'s
//! rule for an attempt that ended while others may still run, and
//! [`hedge_now`] grants (or refuses) a hedge the delay asks for: the same
//! verdict and the same step (attempt limit, deadline, breaker, budget),
//! with a failure that is not the last one in flight dropped rather than
//! given up with.

use core::time::Duration;

use super::{Hooks, Progress, Trace, give_up, verdict};
use crate::decision::Decision;
use crate::event::{AttemptKind, RetryEvent};
use crate::record::Records;
use crate::report::GiveUp;

/// How a hedged call goes on after one of its attempts ended.
pub(crate) enum Hedging<T, E> {
    /// The call ends with this outcome: accepted (`true`: the `Ok` that
    /// `on_success` is told of), or given up with (stopped, or the failure
    /// of the last attempt in flight when no other may start).
    Done(Result<T, E>, bool),
    /// Start another attempt now (the failure was told to `on_retry` and
    /// dropped).
    Next,
    /// No other attempt may start: wait for those in flight (the failure
    /// was dropped; it was not the last).
    Wait,
}

impl<T, E> Hedging<T, E> {
    /// The call ends with `outcome`, which it accepted.
    fn accepted(outcome: Result<T, E>) -> Self {
        Hedging::Done(outcome, true)
    }
}

/// A hedged call's progress: the report counts its hedges.
struct HedgedProgress<'a, P> {
    progress: &'a mut P,
    started: u32,
    hedges: u32,
}

impl<P: Progress> Progress for HedgedProgress<'_, P> {
    #[inline(always)]
    fn step(&mut self, decision: Decision) -> Option<Duration> {
        self.progress.step(decision)
    }
    #[inline(always)]
    fn succeeded(&mut self) {
        self.progress.succeeded();
    }
    #[inline(always)]
    fn attempt(&self) -> u32 {
        self.progress.attempt()
    }
    fn event(&self, delay: Duration) -> RetryEvent {
        self.progress.event(delay)
    }
    fn report(&self) -> GiveUp {
        let mut report = self.progress.report();
        report.attempts = self.started;
        report.hedges = self.hedges;
        report
    }
    #[inline(always)]
    fn failure_kind(&self) -> Option<&'static str> {
        self.progress.failure_kind()
    }
}

/// Where a hedged call stands as one of its attempts ends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HedgeCount {
    /// Whether other attempts still run.
    pub(crate) in_flight: bool,
    /// Whether a slot is free for another.
    pub(crate) room: bool,
    /// Whether the call's token was cancelled: no other starts.
    pub(crate) cancelled: bool,
    /// Attempts started so far.
    pub(crate) started: u32,
    /// Of those, how many the delay started.
    pub(crate) hedges: u32,
}

/// After one attempt of a hedged call ended with `outcome` (`count`: where
/// the call stands): the rule of [`after_attempt`](super::after_attempt),
/// with one difference. Each further attempt is a step of the same state
/// (so the attempt limit, the deadline, the breaker and the budget grant
/// it), and the granted delay is not slept:
/// a failure to retry starts the next attempt at once. A failure that
/// cannot be followed by another attempt gives the call up only if it is
/// the last in flight; otherwise it is dropped and the call waits for the
/// others (the last error is the one returned).
#[inline]
pub(crate) fn after_hedged_attempt<T, E, H: Hooks<T, E>, R: Trace<E>, M: Records>(
    progress: &mut impl Progress,
    outcome: Result<T, E>,
    count: HedgeCount,
    hooks: &mut H,
    trace: &R,
    recording: &mut M,
) -> Hedging<T, E> {
    let HedgeCount {
        in_flight,
        room,
        cancelled,
        started,
        hedges,
    } = count;
    let mut progress = HedgedProgress {
        progress,
        started,
        hedges,
    };
    let (decision, outcome) = verdict!(progress, outcome, hooks, recording, Hedging::accepted);
    let stop = matches!(decision, Decision::Stop);
    // (The step always runs: it tells the breaker of the attempt's outcome.
    // The attempt limit, at most the slots, leaves room for what it
    // grants, but for a throttled schedule's own limit: `room`.)
    match progress.step(decision) {
        Some(_) if room && !cancelled => {
            recording.retried(outcome.is_ok(), Duration::ZERO);
            let event = progress.event(Duration::ZERO);
            if H::ON_RETRY {
                hooks.on_retry(&outcome, &event);
            }
            if let Err(error) = &outcome {
                trace.retry(error, event.attempt, Duration::ZERO, event.failure_kind);
            }
            drop(outcome);
            Hedging::Next
        }
        _ if in_flight && !stop => {
            recording.retried(outcome.is_ok(), Duration::ZERO);
            drop(outcome);
            Hedging::Wait
        }
        _ => {
            let ended = Some(outcome.is_ok());
            // (With attempts left, the token ended the call: the steps the
            // attempts it kept from starting took do not count.)
            let outcome = if cancelled && room && !stop {
                super::cancelled(&progress, outcome, hooks, trace, recording, ended)
            } else {
                give_up(&progress, outcome, hooks, trace, recording, ended)
            };
            Hedging::Done(outcome, false)
        }
    }
}

/// A hedged call's delay ran out with attempt `progress.attempt() + 1` in
/// flight and none ended: whether a hedge may start now (the same step as
/// a retry: attempt limit, deadline, breaker, budget). `on_hedge` hears of
/// it with the event of kind [`AttemptKind::Hedge`] and the delay that ran
/// out. Refused, the state has given up for its reason, and the call waits
/// for the attempts in flight.
#[inline]
pub(crate) fn hedge_now<T, E, H: Hooks<T, E>>(
    progress: &mut impl Progress,
    delay: Duration,
    hooks: &mut H,
) -> bool {
    if progress.step(Decision::Retry).is_none() {
        return false;
    }
    if H::ON_HEDGE {
        hooks.on_hedge(&progress.event(delay).with_kind(AttemptKind::Hedge));
    }
    true
}
