//! The retry state machine, [`RetryState`]: one call's progress through a
//! [`Policy`], for a loop you write yourself.

use core::num::NonZeroU32;
use core::time::Duration;
use std::time::Instant;

use crate::budget::RetryBudget;
use crate::circuit::{CircuitBreaker, CircuitOpen, Permit};
use crate::clock::{self, Clock};
use crate::decision::Decision;
use crate::event::{AttemptContext, RetryEvent};
use crate::jitter::{Jitter, JitterRng};
use crate::kind::{Held, Kind, MAX_KINDS, THROTTLED_SLOT, Tally};
use crate::policy::{self, OnDeadline, Policy, Settings};
use crate::report::{GiveUp, GiveUpReason};
use crate::strategy::{Builtin, MAX_MARKS, Mark, Strategy};
use crate::throttle::{AdaptiveThrottle, Rejected, ThrottlePermit};

/// One call's progress through a [`Policy`]: after each failed attempt, ask
/// it whether to retry and how long to wait.
///
/// This is what `#[retry]` expands to and what [`Policy::retry`] runs; use it
/// directly when the operation does not fit a closure (the EventSauce style:
/// the policy does not run your code, you drive the loop).
///
/// It holds no heap memory, is `Send` and `Sync` when the strategy is, and
/// once it has given up (returned `None`) it keeps returning `None`.
///
/// With a [`RetryBudget`] ([`with_budget`](RetryState::with_budget)) each
/// granted retry spends a token and [`on_success`](RetryState::on_success)
/// deposits; with a [`CircuitBreaker`] ([`with_circuit`](RetryState::with_circuit))
/// call [`before_attempt`](RetryState::before_attempt) before each attempt,
/// and the outcome reaches the breaker through `next_delay_for` (a
/// [`Decision::Stop`] means the service answered, and counts as a success)
/// or `on_success`. With an [`AdaptiveThrottle`]
/// ([`with_throttle`](RetryState::with_throttle)) call
/// [`ask_throttle`](RetryState::ask_throttle) before each attempt (after
/// `before_attempt`); an attempt counts as accepted by the backend when it
/// succeeds or its error is a [`Decision::Stop`] (the backend answered),
/// and as not accepted when its error is retried.
///
/// # Examples
///
/// ```
/// use backoff_runtime::{Decision, Jitter, Policy};
/// use std::time::Duration;
///
/// let policy = Policy::exponential(Duration::from_millis(1)).jitter(Jitter::None).attempts(4);
/// let mut state = policy.start();
/// let mut calls = 0;
/// let result: Result<u32, &str> = loop {
///     calls += 1;
///     let outcome = if calls < 3 { Err("busy") } else { Ok(calls) };
///     match outcome {
///         Ok(v) => break Ok(v),
///         Err(e) => match state.next_delay_for(Decision::Retry) {
///             Some(delay) => std::thread::sleep(delay),
///             None => break Err(e),
///         },
///     }
/// };
/// assert_eq!(result, Ok(3));
/// assert_eq!(state.attempt(), 2); // two failures before the success
/// ```
#[derive(Debug)]
pub struct RetryState<'p, S = Builtin> {
    policy: &'p Policy<S>,
    core: Core<'p>,
}

/// What a call's state keeps besides its policy, which is generic over
/// nothing: the general path of [`RetryState::next_delay_for`] runs on it
/// with the policy's [`Settings`] and its main schedule behind a pointer
/// ([`MainSchedule`]), so that the path is compiled once, in this crate,
/// not once per strategy type in every crate that uses the attribute.
#[derive(Debug)]
struct Core<'p> {
    failures: u32,
    /// Failures that did not advance the main schedule (a `RetryAfter`, a
    /// throttled retry, the one that gave up): the main schedule's retry
    /// number is `failures - skipped`, so the common path counts only
    /// `failures`. (Past `u32::MAX` failures, each main retry takes one
    /// off instead, so the retry number still saturates as a count of its
    /// own would.)
    skipped: u32,
    previous: Option<Duration>,
    /// The previous delay of the schedules besides the main one (the
    /// kinds', the throttled one's), which they share: only `decorrelated`
    /// reads it.
    kinds_previous: Option<Duration>,
    /// The kind of the last failure, its index plus one (0: none,
    /// [`THROTTLED`]: the throttled kind).
    kind: u8,
    rng: JitterRng,
    clock: Clock,
    start: Option<Instant>,
    /// With `reset_after` (and a start time): the schedule's runs.
    runs: Option<Runs>,
    /// [`DONE`] and [`CHECKED`]; zero on the common path.
    flags: u8,
    /// The common path of [`next_delay_for`](RetryState::next_delay_for) (a
    /// plain retry granted by the attempt limit, with `flags` zero) runs
    /// while `failures < fast`: the limit less one (`u32::MAX` unlimited),
    /// or zero when every failure must take the general path (`flags` not
    /// zero). One comparison then stands for the flags and the limit.
    fast: u32,
    /// Why the call gave up, once it has ([`DONE`] is set too).
    gave_up: Option<GiveUpReason>,
    budget: Option<&'p RetryBudget>,
    gate: Gate<'p>,
    /// Where the main schedule crossed its stage boundaries (a schedule
    /// whose stages end: see [`Strategy::staging`]).
    marks: [Mark; MAX_MARKS],
    /// Each kind's failures, for a policy with [`kinds`](Policy::kinds)
    /// or a [`throttled`](Policy::throttled) schedule (in
    /// [`THROTTLED_SLOT`]).
    kinds: Tally,
}

/// A call's runs of its schedule, under [`Policy::reset_after`]: times in
/// nanoseconds after the call's start (24 bytes, all of it what a state
/// without `reset_after` grows by).
#[derive(Debug, Clone, Copy)]
struct Runs {
    /// When the current run began: at the call's start, or at the failure
    /// that began it; `max_elapsed` counts from it.
    began: u64,
    /// When the attempt now running began: the end of the sleep granted
    /// last.
    attempt: u64,
    /// The failures of the runs before this one (`failures` counts this
    /// run's).
    before: u32,
    /// The current run, from 1.
    run: NonZeroU32,
}

/// A call's breaker and throttle, if any, and the permits they gave the
/// attempt now running: a [`RetryState`]'s, and the attribute's call's
/// until a failure builds its state.
#[derive(Debug, Default)]
pub(crate) struct Gate<'p> {
    pub(crate) circuit: Option<&'p CircuitBreaker>,
    pub(crate) throttle: Option<&'p AdaptiveThrottle>,
    pub(crate) permit: Option<Permit<'p>>,
    pub(crate) throttle_permit: Option<ThrottlePermit<'p>>,
}

impl Gate<'_> {
    /// Before an attempt: the breaker's leave (always, without one, and
    /// no clock is read). (Not by `?`: that cost the breaker's success
    /// path 20 instructions, measured.)
    #[inline(always)]
    pub(crate) fn admit(&mut self, clock: Clock) -> Result<(), CircuitOpen> {
        if let Some(circuit) = self.circuit {
            match circuit.acquire_on(clock) {
                Ok(permit) => self.permit = Some(permit),
                Err(open) => return Err(open),
            }
        }
        Ok(())
    }

    /// Before an attempt, after [`admit`](Gate::admit): the throttle's
    /// leave; a rejection releases the breaker's permit unused.
    #[inline(always)]
    pub(crate) fn ask_throttle(&mut self, clock: Clock) -> Result<(), Rejected> {
        if let Some(throttle) = self.throttle {
            match throttle.try_acquire(clock()) {
                Ok(permit) => self.throttle_permit = Some(permit),
                Err(rejected) => {
                    if let Some(permit) = self.permit.take() {
                        permit.release();
                    }
                    return Err(rejected);
                }
            }
        }
        Ok(())
    }

    /// The attempt's outcome reaches the breaker and the throttle:
    /// `answered`, the service answered (an accepted outcome, a `Stop`),
    /// or not (the clock is read only then, and only for a breaker).
    #[inline(always)]
    pub(crate) fn settle(&mut self, answered: bool, clock: Clock) {
        if let Some(permit) = self.permit.take() {
            if answered {
                permit.success();
            } else {
                permit.failure(clock());
            }
        }
        if let Some(permit) = self.throttle_permit.take() {
            if answered {
                permit.accepted();
            } else {
                permit.rejected();
            }
        }
    }
}

/// The time since `start`, read from `clock` now; zero without a start
/// (nothing needed the time).
#[inline]
pub(crate) fn since(clock: Clock, start: Option<Instant>) -> Duration {
    start.map_or(Duration::ZERO, |s| clock().saturating_duration_since(s))
}

/// `d` in nanoseconds, saturating (584 years).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// [`Core::kind`]: the last failure was throttled.
const THROTTLED: u8 = u8::MAX;

/// [`Core::flags`]: the call has given up.
const DONE: u8 = 1;
/// [`Core::flags`]: a granted delay must pass
/// [`admit`](Core::admit) (a deadline, a budget or a breaker; a
/// breaker also hears of every outcome).
const CHECKED: u8 = 2;
/// [`Core::flags`]: the sleep granted last was cut to end at the
/// deadline, for one last try (`OnDeadline::LastTry`).
const LAST_TRY: u8 = 4;
/// [`Core::flags`]: the call counts runs ([`Core::runs`] is kept).
const RUNS: u8 = 8;

impl<S> Policy<S> {
    /// Starts a call: the state machine for a hand-written loop, timed with
    /// [`Instant::now`].
    ///
    /// ```
    /// use backoff_runtime::Policy;
    ///
    /// let policy = Policy::immediate().attempts(2);
    /// let mut state = policy.start();
    /// assert!(state.next_delay().is_some()); // attempt 1 failed: retry
    /// assert!(state.next_delay().is_none()); // attempt 2 failed: give up
    /// ```
    pub fn start(&self) -> RetryState<'_, S> {
        self.start_with_clock(clock::system)
    }

    /// Starts a call timed by `clock` (for instance
    /// [`clock::tokio`], which follows tokio's paused
    /// time in tests).
    ///
    /// ```
    /// use backoff_runtime::{Policy, clock};
    ///
    /// let policy = Policy::immediate();
    /// let state = policy.start_with_clock(clock::system);
    /// assert_eq!(state.attempt(), 0);
    /// ```
    #[doc(hidden)]
    pub fn start_with_clock(&self, clock: Clock) -> RetryState<'_, S> {
        RetryState::starting_at(self, clock, Some(clock()))
    }
}

impl<'p, S> RetryState<'p, S> {
    /// A state whose call began at `start` (if anything needs the time).
    pub(crate) fn starting_at(policy: &'p Policy<S>, clock: Clock, start: Option<Instant>) -> Self {
        let checked = policy.elapsed_limit().is_some()
            || policy.settings().stop_at.is_some()
            || policy.settings().reset_after.is_some();
        // (Runs are counted from the call's start, read for them.)
        let runs = policy.settings().reset_after.is_some() && start.is_some();
        RetryState {
            policy,
            core: Core {
                failures: 0,
                skipped: 0,
                previous: None,
                kinds_previous: None,
                kinds: Tally::default(),
                kind: 0,
                rng: policy.rng(),
                clock,
                start,
                runs: runs.then_some(Runs {
                    began: 0,
                    attempt: 0,
                    before: 0,
                    run: NonZeroU32::MIN,
                }),
                // (`runs` implies `checked`.)
                flags: (u8::from(checked) * CHECKED) | (u8::from(runs) * RUNS),
                fast: if checked { 0 } else { fast(policy) },
                gave_up: None,
                budget: None,
                gate: Gate::default(),
                marks: [Mark::default(); MAX_MARKS],
            },
        }
    }

    /// Shares a retry budget: each granted retry spends a token (and with
    /// none left the call gives up), each success deposits.
    pub fn with_budget(mut self, budget: &'p RetryBudget) -> Self {
        self.core.budget = Some(budget);
        self.checked()
    }

    /// Puts the call behind a circuit breaker: call
    /// [`before_attempt`](RetryState::before_attempt) before each attempt.
    pub fn with_circuit(mut self, circuit: &'p CircuitBreaker) -> Self {
        self.core.gate.circuit = Some(circuit);
        self.checked()
    }

    /// Puts the call behind client-side adaptive throttling: call
    /// [`ask_throttle`](RetryState::ask_throttle) before each attempt.
    pub fn with_throttle(mut self, throttle: &'p AdaptiveThrottle) -> Self {
        self.core.gate.throttle = Some(throttle);
        self.checked()
    }

    /// A granted delay must pass [`Core::admit`] (a budget, a breaker or a
    /// throttle was added).
    fn checked(mut self) -> Self {
        self.core.flags |= CHECKED;
        self.core.fast = 0;
        self
    }

    /// Before each attempt (after [`before_attempt`](RetryState::before_attempt)):
    /// asks the throttle, if any, whether to send it; `Err(Rejected)` means
    /// fail fast without calling (the call gives up with
    /// [`GiveUpReason::Rejected`], and a breaker's permit taken for the
    /// attempt is released unused). Without a throttle, always `Ok` (and
    /// reads no clock).
    ///
    /// ```
    /// use backoff_runtime::{AdaptiveThrottle, Decision, GiveUpReason, Policy};
    /// use std::time::Duration;
    ///
    /// static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(1.0, Duration::from_secs(120));
    /// let policy = Policy::immediate().attempts(1);
    /// // A backend that rejects every request: each call's one attempt is
    /// // retryable, so none counts as accepted.
    /// let mut refused = 0;
    /// for _ in 0..100 {
    ///     let mut state = policy.start().with_throttle(&THROTTLE);
    ///     match state.ask_throttle() {
    ///         Ok(()) => assert_eq!(state.next_delay_for(Decision::Retry), None),
    ///         Err(_) => {
    ///             assert_eq!(state.give_up().unwrap().reason, GiveUpReason::Rejected);
    ///             refused += 1;
    ///         }
    ///     }
    /// }
    /// assert!(refused > 50, "only {refused} rejected locally");
    /// ```
    pub fn ask_throttle(&mut self) -> Result<(), Rejected> {
        let asked = self.core.gate.ask_throttle(self.core.clock);
        asked.inspect_err(|_| self.core.give_up_for(GiveUpReason::Rejected))
    }

    /// Before each attempt: asks the circuit breaker, if any, for leave to
    /// call; `Err(CircuitOpen)` means fail fast without calling. Without a
    /// breaker, always `Ok` (and reads no clock).
    ///
    /// ```
    /// use backoff_runtime::{CircuitBreaker, Policy};
    /// use std::time::Duration;
    ///
    /// static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(60));
    /// let policy = Policy::immediate().attempts(5);
    /// let mut state = policy.start().with_circuit(&BREAKER);
    /// assert!(state.before_attempt().is_ok());
    /// // The failure opens the breaker: a retry would only fail fast, so the
    /// // call gives up with its real error.
    /// assert_eq!(state.next_delay(), None);
    /// // Another call fails fast.
    /// let mut other = policy.start().with_circuit(&BREAKER);
    /// assert!(other.before_attempt().is_err());
    /// ```
    ///
    /// A refusal ends the call: [`give_up`](RetryState::give_up)'s reason
    /// is then [`GiveUpReason::CircuitOpen`].
    pub fn before_attempt(&mut self) -> Result<(), CircuitOpen> {
        let admitted = self.core.gate.admit(self.core.clock);
        admitted.inspect_err(|_| self.core.give_up_for(GiveUpReason::CircuitOpen))
    }

    /// The state of a call whose first attempt `gate` (its breaker and
    /// throttle) admitted, with their permits (the attribute's call keeps
    /// them apart until it fails).
    pub(crate) fn holding(mut self, gate: Gate<'p>) -> Self {
        self.core.gate = gate;
        self
    }

    /// The call gives up for `reason` before an attempt (a breaker's
    /// refusal, a throttle's rejection).
    pub(crate) fn refuse(&mut self, reason: GiveUpReason) {
        self.core.give_up_for(reason);
    }

    /// Takes the breaker's permit [`before_attempt`](RetryState::before_attempt)
    /// left (a hedged call keeps one per attempt in flight).
    #[cfg(feature = "tokio")]
    pub(crate) fn take_permit(&mut self) -> Option<Permit<'p>> {
        self.core.gate.permit.take()
    }

    /// Gives back an attempt's permit, to be told of its outcome by
    /// [`next_delay_for`](RetryState::next_delay_for) or
    /// [`on_success`](RetryState::on_success).
    #[cfg(feature = "tokio")]
    pub(crate) fn put_permit(&mut self, permit: Option<Permit<'p>>) {
        if let Some(old) = core::mem::replace(&mut self.core.gate.permit, permit) {
            old.release();
        }
    }

    /// After a successful attempt: tells the breaker and refills the budget.
    pub fn on_success(&mut self) {
        self.core.gate.settle(true, self.core.clock);
        if let Some(budget) = self.core.budget {
            budget.deposit();
        }
    }

    /// Failed attempts reported so far (so after a failure, the number of the
    /// attempt that failed, from 1).
    pub fn attempt(&self) -> u32 {
        let before = self.core.runs.map_or(0, |runs| runs.before);
        before.saturating_add(self.core.failures)
    }

    /// The call's deadline under the policy's
    /// [`max_elapsed`](Policy::max_elapsed), counted from the start of the
    /// current run; `None` without it. (A loop's whole-call `timeout`, such
    /// as [`Retrying::timeout`](crate::Retrying::timeout), is the loop's:
    /// its events and contexts count to the nearer of the two.)
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// let policy = Policy::immediate().max_elapsed(Duration::from_secs(10));
    /// let state = policy.start();
    /// let left = state.context().remaining.unwrap();
    /// assert!(left <= Duration::from_secs(10) && left > Duration::from_secs(9));
    /// assert!(state.deadline().is_some());
    /// assert_eq!(Policy::immediate().start().deadline(), None);
    /// ```
    #[doc(hidden)]
    pub fn deadline(&self) -> Option<Instant> {
        let run = self.core.run_start();
        run.zip(self.policy.elapsed_limit())
            .and_then(|(run, limit)| run.checked_add(limit))
    }

    /// The context of the attempt about to run (after a failure, the next
    /// one): its number, whether the attempt limit makes it the last (the
    /// current run's, under [`reset_after`](Policy::reset_after)), and the
    /// time left until the [deadline](AttemptContext::deadline), read now
    /// (no clock is read without a deadline).
    pub fn context(&self) -> AttemptContext {
        let attempt = self.attempt().saturating_add(1);
        let last = self.is_last_try()
            || (self.policy).is_last_attempt(self.core.failures.saturating_add(1));
        let context = AttemptContext::new(attempt, last);
        (self.deadline()).map_or(context, |d| {
            context.with_deadline(Some(d), (self.core.clock)())
        })
    }

    /// Time since the call began, read from the clock now (zero if the state
    /// was started untimed, as the attribute and [`Policy::retry`] start it
    /// when nothing needs the time).
    #[doc(hidden)]
    pub fn elapsed(&self) -> Duration {
        since(self.core.clock, self.core.start)
    }

    /// The event describing the retry that [`next_delay_for`] just granted
    /// with `delay`, as `on_retry` is told it: the failed attempt, the time
    /// since the call began and the time left (read now), the failure's
    /// kind, and the run under [`reset_after`](Policy::reset_after).
    ///
    /// ```
    /// use backoff_runtime::{Jitter, Policy};
    /// use std::time::Duration;
    ///
    /// let policy = Policy::constant(Duration::from_millis(10)).jitter(Jitter::None);
    /// let mut state = policy.start();
    /// let delay = state.next_delay().unwrap();
    /// let event = state.event(delay);
    /// assert_eq!((event.attempt, event.delay, event.run), (1, delay, 1));
    /// ```
    ///
    /// [`next_delay_for`]: RetryState::next_delay_for
    pub fn event(&self, delay: Duration) -> RetryEvent {
        // (One clock read, if the start was.)
        let now = self.core.start.map(|_| (self.core.clock)());
        let elapsed = now
            .zip(self.core.start)
            .map(|(now, s)| now.saturating_duration_since(s));
        let remaining = now
            .zip(self.deadline())
            .map(|(now, d)| d.saturating_duration_since(now));
        RetryEvent {
            failure_kind: self.failure_kind(),
            remaining,
            run: self.core.runs.map_or(1, |runs| runs.run.get()),
            ..RetryEvent::new(self.attempt(), delay, elapsed.unwrap_or_default())
        }
    }

    /// The kind of the last failure (the name of its entry in the policy's
    /// [`kinds`](Policy::kinds)), if its verdict named one; for a
    /// [`Decision::Throttled`] on a policy with a
    /// [`throttled`](Policy::throttled) schedule, that kind's name,
    /// `"throttled"` unless set with
    /// [`throttled_kind`](Policy::throttled_kind).
    ///
    /// ```
    /// use backoff_runtime::{Decision, Policy, Kind};
    ///
    /// static KINDS: [Kind; 1] = [Kind::new("busy", Policy::immediate())];
    /// static POLICY: Policy = Policy::immediate().kinds(&KINDS);
    /// let mut state = POLICY.start();
    /// assert_eq!(state.failure_kind(), None);
    /// state.next_delay_for(Decision::Kind(0));
    /// assert_eq!(state.failure_kind(), Some("busy"));
    /// ```
    #[doc(hidden)]
    pub fn failure_kind(&self) -> Option<&'static str> {
        if self.core.kind == THROTTLED {
            return self.policy.settings().throttled.as_ref().map(Kind::name);
        }
        let index = usize::from(self.core.kind.checked_sub(1)?);
        self.policy.settings().kinds.get(index).map(Kind::name)
    }

    /// Whether this call has given up.
    #[doc(hidden)]
    pub fn is_done(&self) -> bool {
        self.core.flags & DONE != 0
    }

    /// Why this call gave up, once it has: after
    /// [`next_delay_for`](RetryState::next_delay_for) returned `None`, or
    /// [`before_attempt`](RetryState::before_attempt) an error. (The
    /// crate's own; users read [`give_up`](RetryState::give_up)'s reason.)
    #[doc(hidden)]
    pub fn give_up_reason(&self) -> Option<GiveUpReason> {
        self.core.gave_up
    }

    /// The report of a call that gave up (`None` while it has not): calls
    /// made, time since the call began (read now; zero if the state was
    /// started untimed), and the reason.
    ///
    /// ```
    /// use backoff_runtime::{Decision, GiveUpReason, Policy};
    ///
    /// let policy = Policy::immediate().attempts(5);
    /// let mut state = policy.start();
    /// assert_eq!(state.give_up(), None);
    /// assert!(state.next_delay().is_some());
    /// assert_eq!(state.next_delay_for(Decision::Stop), None);
    /// let report = state.give_up().unwrap();
    /// assert_eq!((report.attempts, report.reason), (2, GiveUpReason::Stopped));
    /// ```
    pub fn give_up(&self) -> Option<GiveUp> {
        self.core.gave_up.map(|_| self.report())
    }

    /// The report of a call that gave up, for the loops: as
    /// [`give_up`](RetryState::give_up), and a call that has not given up
    /// (a loop's whole-call timeout ended it) reports its attempt limit.
    /// The clock is read once, for `elapsed`, and only if the call's start
    /// was.
    pub(crate) fn report(&self) -> GiveUp {
        let reason = self.core.gave_up.unwrap_or(GiveUpReason::Attempts);
        GiveUp {
            failure_kind: self.failure_kind(),
            ..GiveUp::new(self.attempt(), self.elapsed(), reason)
        }
    }

    /// Whether the attempt about to run is the last try that
    /// [`OnDeadline::LastTry`] grants at the deadline: its sleep was cut to
    /// end there, and whatever it returns is the call's outcome.
    ///
    /// ```
    /// use backoff_runtime::{OnDeadline, Policy, clock::Clock};
    /// use std::time::{Duration, Instant};
    ///
    /// fn frozen() -> Instant {
    ///     static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    ///     *START.get_or_init(Instant::now)
    /// }
    /// let policy = Policy::constant(Duration::from_secs(4))
    ///     .jitter(backoff_runtime::Jitter::None)
    ///     .max_elapsed(Duration::from_secs(3))
    ///     .on_deadline(OnDeadline::LastTry);
    /// let mut state = policy.start_with_clock(frozen as Clock);
    /// assert_eq!(state.next_delay(), Some(Duration::from_secs(3)));
    /// assert!(state.is_last_try());
    /// assert_eq!(state.next_delay(), None);
    /// ```
    #[doc(hidden)]
    pub fn is_last_try(&self) -> bool {
        self.core.flags & LAST_TRY != 0
    }
}

impl<S: Strategy> RetryState<'_, S> {
    /// After a failed attempt whose error should be retried: the delay to
    /// sleep before the next attempt, or `None` to give up.
    ///
    /// The same as `next_delay_for(Decision::Retry)`.
    #[inline]
    pub fn next_delay(&mut self) -> Option<Duration> {
        self.next_delay_for(Decision::Retry)
    }

    /// After a failed attempt, given the verdict on its error: the delay to
    /// sleep before the next attempt, or `None` to give up.
    ///
    /// Gives up on [`Decision::Stop`], when the attempt limit is reached, or
    /// when the sleep would end past the policy's `max_elapsed`.
    /// [`Decision::RetryAfter`] waits exactly its duration.
    /// [`Decision::Throttled`] uses the policy's throttled schedule and
    /// limit, if it has one (the throttled failures counted apart from the
    /// others, see [`Policy::throttled`]). With a budget, a retry is
    /// granted only if a token can be spent.
    #[inline]
    pub fn next_delay_for(&mut self, decision: Decision) -> Option<Duration> {
        if matches!(decision, Decision::Retry) {
            // (A schedule whose stages end takes the general path.)
            if self.core.failures < self.core.fast && !self.policy.strategy().staging().is_staged()
            {
                // The common path: a plain retry, no deadline, budget or
                // breaker, not given up, and the attempt limit allows
                // another call. No overflow: `failures < fast <= u32::MAX`.
                let core = &mut self.core;
                return Some(self.policy.common_step(
                    &mut core.failures,
                    core.skipped,
                    &mut core.previous,
                    &mut core.rng,
                ));
            }
            return self
                .core
                .retry_in_general(self.policy.settings(), self.policy);
        }
        self.core
            .next_delay_in_general(self.policy.settings(), self.policy, decision)
    }
}

/// The main schedule of a policy, behind a pointer: the one thing the
/// general path reads of a policy that depends on its strategy (its
/// settings it reads through [`Settings`]).
trait MainSchedule {
    /// The main schedule's delay before retry `retry`, or `None` when the
    /// policy's `stop_at_delay` gives up ([`Policy::backoff_within`]).
    /// `elapsed` is read only for a schedule whose stages end by time.
    fn main_backoff(
        &self,
        retry: u32,
        previous: &mut Option<Duration>,
        rng: &mut JitterRng,
        stages: (&dyn Fn() -> Duration, &mut [Mark]),
    ) -> Option<Duration>;
}

impl<S: Strategy> MainSchedule for Policy<S> {
    fn main_backoff(
        &self,
        retry: u32,
        previous: &mut Option<Duration>,
        rng: &mut JitterRng,
        stages: (&dyn Fn() -> Duration, &mut [Mark]),
    ) -> Option<Duration> {
        self.backoff_at(retry, previous, rng, stages)
    }
}

impl Settings {
    /// The kind `index` names (within [`MAX_KINDS`]), if any.
    fn kind(&self, index: u8) -> Option<&'static Kind> {
        let index = usize::from(index);
        self.kinds.get(index).filter(|_| index < MAX_KINDS)
    }
}

impl Core<'_> {
    /// [`next_delay_in_general`](Core::next_delay_in_general) for a plain
    /// retry. A `Decision` is passed in memory (it is 24 bytes): a loop
    /// whose every verdict is a plain retry, as the blocking loop without
    /// `when` is, then writes none per retry.
    #[inline(never)]
    fn retry_in_general(
        &mut self,
        settings: &Settings,
        policy: &dyn MainSchedule,
    ) -> Option<Duration> {
        self.next_delay_in_general(settings, policy, Decision::Retry)
    }

    /// [`RetryState::next_delay_for`] for any decision and any state. Out
    /// of line and generic over nothing: compiled once, in this crate.
    #[inline(never)]
    fn next_delay_in_general(
        &mut self,
        settings: &Settings,
        policy: &dyn MainSchedule,
        decision: Decision,
    ) -> Option<Duration> {
        if self.gate.permit.is_some() || self.gate.throttle_permit.is_some() {
            self.report_to_circuit(settings, decision);
        }
        if self.flags & (DONE | RUNS) != 0 {
            if self.flags & DONE != 0 {
                return None;
            }
            self.new_run_if_long(settings);
        }
        // Skipped, unless `main_backoff` says otherwise.
        if self.failures < u32::MAX {
            self.skipped += 1;
        }
        self.failures = self.failures.saturating_add(1);
        self.kind = 0;
        let delay = match (decision, settings.throttled.as_ref()) {
            (Decision::Stop, _) => Err(GiveUpReason::Stopped),
            (Decision::Kind(i), _) if let Some(kind) = settings.kind(i) => {
                self.kind = i.saturating_add(1);
                self.kind_delay(settings, kind, usize::from(i), true)
            }
            (Decision::KindAfter(i, d), _) if settings.kind(i).is_some() => {
                self.kind = i.saturating_add(1);
                self.retry_after(settings, d)
            }
            (Decision::KindAfter(_, d), _) => self.retry_after(settings, d),
            (Decision::Throttled, Some(throttled)) => {
                self.kind = THROTTLED;
                // (The common path keeps no kind: from now on every
                // verdict takes this one.)
                self.fast = 0;
                self.kind_delay(settings, throttled, THROTTLED_SLOT, false)
            }
            _ if !settings.allows_retry_after(self.main_failures()) => Err(GiveUpReason::Attempts),
            (Decision::RetryAfter(d), _) => self.retry_after(settings, d),
            // (`Retry`, `Throttled` without a throttled schedule, a `Kind`
            // naming no kind.)
            _ => self.main_backoff(policy),
        };
        let delay = match delay {
            Ok(d) if self.flags & CHECKED != 0 => self.admit(settings, d),
            other => other,
        };
        match delay {
            Ok(d) => {
                if self.flags & RUNS != 0
                    && let Some(runs) = self.runs.as_mut()
                {
                    // (From the failure's time, kept there.)
                    runs.attempt = runs.attempt.saturating_add(nanos(d));
                }
                Some(d)
            }
            Err(reason) => {
                self.give_up_for(reason);
                None
            }
        }
    }

    /// When the current run began: the call's start, or with
    /// `reset_after` the failure that began it.
    fn run_start(&self) -> Option<Instant> {
        let start = self.start?;
        match self.runs {
            Some(runs) => start.checked_add(Duration::from_nanos(runs.began)),
            None => Some(start),
        }
    }

    /// With `reset_after`, at a failure: if the attempt that failed ran at
    /// least `after`, a new run begins with it (its failure is then counted
    /// as the run's first: the counts, the previous delays and the last
    /// try start over). The time now, in nanoseconds after the call's
    /// start, is kept as the next attempt's start until the step grants
    /// its delay, which is added to it.
    #[cold]
    fn new_run_if_long(&mut self, settings: &Settings) {
        let (Some(start), Some(runs)) = (self.start, self.runs.as_mut()) else {
            return;
        };
        let now = nanos((self.clock)().saturating_duration_since(start));
        let long = |after| now.saturating_sub(runs.attempt) >= nanos(after);
        if self.failures > 0 && settings.reset_after.is_some_and(long) {
            runs.before = runs.before.saturating_add(self.failures);
            runs.run = runs.run.saturating_add(1);
            runs.began = now;
            (self.failures, self.skipped) = (0, 0);
            (self.previous, self.kinds_previous) = (None, None);
            self.kinds = Tally::default();
            self.marks = [Mark::default(); MAX_MARKS];
            self.flags &= !LAST_TRY;
        }
        runs.attempt = now;
    }

    /// Tells the breaker and the throttle how the attempt went: a `Stop`
    /// (or a kind that stops) means the service answered.
    #[cold]
    fn report_to_circuit(&mut self, settings: &Settings, decision: Decision) {
        let answered = match decision {
            Decision::Stop => true,
            // (A kind without a schedule: `on(PATTERN, stop)`, a throttled
            // kind `Kind::named`.)
            Decision::Kind(i) => settings.kind(i).is_some_and(|k| k.schedule().is_none()),
            Decision::Throttled => settings
                .throttled
                .as_ref()
                .is_some_and(|k| k.schedule().is_none()),
            _ => false,
        };
        self.gate.settle(answered, self.clock);
    }

    /// The failures the policy's own attempt limit counts: all of them,
    /// but for the throttled ones of a policy with a throttled schedule
    /// (a kind of its own, with its own limit).
    fn main_failures(&self) -> u32 {
        // (None are counted there without a throttled schedule.)
        (self.failures).saturating_sub(self.kinds.failures(THROTTLED_SLOT))
    }

    /// The next delay of the main schedule (the caller checked the limit),
    /// from the general path, which counted the failure as skipped; the
    /// policy's `stop_at_delay` may give up (reason `Attempts`).
    fn main_backoff(&mut self, policy: &dyn MainSchedule) -> Result<Duration, GiveUpReason> {
        self.skipped = self.skipped.saturating_sub(1);
        let retry = self.failures - self.skipped;
        // (A stage's time counts from the run's start, as `max_elapsed`.)
        let (start, clock) = (self.run_start(), self.clock);
        let elapsed = move || since(clock, start);
        let stages = (&elapsed as &dyn Fn() -> Duration, &mut self.marks[..]);
        policy
            .main_backoff(retry, &mut self.previous, &mut self.rng, stages)
            .ok_or(GiveUpReason::Attempts)
    }

    /// A server's word (the attempt limit allowing another call), bounded:
    /// a longer wait than `retry_after_max` gives up, never sleeps.
    fn retry_after(&self, settings: &Settings, d: Duration) -> Result<Duration, GiveUpReason> {
        if !settings.allows_retry_after(self.main_failures()) {
            Err(GiveUpReason::Attempts)
        } else if d > settings.retry_after_max {
            Err(GiveUpReason::Deadline)
        } else {
            Ok(d)
        }
    }

    /// The next delay of `kind`'s schedule, its failures counted in the
    /// tally's `slot`: within the kind's own attempt limit, counted over
    /// its failures, and, if `bounded_by_main` (a kind of the policy's
    /// table, not the throttled one), the policy's, counted over all; a
    /// kind without a schedule stops.
    fn kind_delay(
        &mut self,
        settings: &Settings,
        kind: &Kind,
        slot: usize,
        bounded_by_main: bool,
    ) -> Result<Duration, GiveUpReason> {
        let Some(t) = kind.schedule() else {
            return Err(GiveUpReason::Stopped);
        };
        let retry = self.kinds.count(slot);
        if !policy::allows(t.attempts, retry)
            || bounded_by_main && !settings.allows_retry_after(self.failures)
        {
            return Err(GiveUpReason::Attempts);
        }
        // (The slot of the schedules besides the main one: only
        // `decorrelated` reads it, and only a strategy that reads it keeps
        // its delay there, so no delay of another schedule is taken for
        // the others'.)
        let (previous, rng) = (&mut self.kinds_previous, &mut self.rng);
        Ok(match &t.strategy {
            // (A builtin without a dynamic call: the common case.)
            Held::Builtin(b) => crate::strategy::backoff(b, t.jitter, retry, previous, rng),
            Held::Static(s) => crate::strategy::backoff(*s, t.jitter, retry, previous, rng),
        })
    }

    /// The deadline, the breaker and the budget: `delay` if the sleep ends
    /// in time, the breaker will let the next attempt through when it ends,
    /// and a token could be spent (checked in that order, so a refused retry
    /// spends nothing, and the call returns its real error rather than sleep
    /// only to fail fast).
    #[cold]
    fn admit(
        &mut self,
        settings: &Settings,
        mut delay: Duration,
    ) -> Result<Duration, GiveUpReason> {
        if self.flags & LAST_TRY != 0 {
            return Err(GiveUpReason::Deadline);
        }
        if let Some(limit) = settings.max_elapsed {
            let elapsed = since(self.clock, self.run_start());
            if elapsed.saturating_add(delay) > limit {
                if !matches!(settings.on_deadline, OnDeadline::LastTry) || elapsed >= limit {
                    return Err(GiveUpReason::Deadline);
                }
                // One last try, at the deadline.
                self.flags |= LAST_TRY;
                delay = limit - elapsed;
            }
        }
        if let Some(circuit) = self.gate.circuit
            && let Some(wake) = (self.clock)().checked_add(delay)
            && !circuit.admits_at(wake)
        {
            // (A wake-up beyond what `Instant` holds is past any `open_for`.)
            return Err(GiveUpReason::CircuitOpen);
        }
        match self.budget {
            Some(budget) if !budget.try_spend() => Err(GiveUpReason::Budget),
            _ => Ok(delay),
        }
    }

    /// Ends the call for `reason`.
    #[cold]
    fn give_up_for(&mut self, reason: GiveUpReason) {
        self.flags |= DONE;
        self.fast = 0;
        self.gave_up = Some(reason);
    }
}

/// What a loop keeps of its [`RetryState`] between attempts when the
/// policy, the clock and the random source need no keeping: the policy is
/// a type (`Fixed`), unseeded (its jitter draws from the process-wide
/// sequence, which holds nothing per call), and nothing needs the call's
/// start time, a budget or a breaker.
/// An `async fn` under `#[retry]` holds this in its future instead of a
/// whole `RetryState`: the future that every call builds and moves is
/// smaller by the difference (8 bytes against 160, 24 for `decorrelated`,
/// the one strategy whose delays depend on the previous one).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Carried<P = [Option<Duration>; 1]> {
    failures: u32,
    /// While the call runs, the failures that did not advance the main
    /// schedule (a `RetryAfter`), as [`RetryState`]'s `skipped`, up to
    /// [`SKIPPED_MAX`]; once the call gave up, [`GAVE_UP`] and the reason
    /// ([`Carried::ended`]). One byte, in what was the padding: the struct
    /// keeps its size.
    tally: u8,
    previous: P,
    /// The call's `Jitter::Spread` phase, its top 16 bits (65,536 phases,
    /// in the padding: the struct keeps its size), zero until drawn.
    phase: u16,
}

/// The most skipped failures a [`Carried`] counts: a call given more
/// `RetryAfter` verdicts than this (252) counts the later ones toward the
/// main schedule's retry number, as if they were plain retries (a
/// `RetryState` keeps counting). The delays of an `exponential` or
/// `fibonacci` schedule that has reached its cap are the same either way.
pub(crate) const SKIPPED_MAX: u8 = GAVE_UP - 1;

/// [`Carried::tally`] from this value on: the call gave up, for
/// `Attempts`, `Stopped` or `Deadline` (in that order).
const GAVE_UP: u8 = u8::MAX - 2;

/// What a [`Carried`] keeps of the previous delay: all of it for a
/// strategy whose delays depend on it (`decorrelated`, `[_; 1]`), nothing
/// for the others (`[_; 0]`).
#[doc(hidden)]
pub trait Previous: Copy + AsRef<[Option<Duration>]> + AsMut<[Option<Duration>]> {
    /// Before the first retry.
    const NONE: Self;
}

impl<const N: usize> Previous for [Option<Duration>; N] {
    const NONE: Self = [None; N];
}

impl<P: Previous> Carried<P> {
    /// Before the first attempt (a constant: a call's start runs no code).
    pub const NEW: Self = Carried {
        failures: 0,
        tally: 0,
        previous: P::NONE,
        phase: 0,
    };

    /// The previous delay, if kept.
    #[inline(always)]
    fn previous(&self) -> Option<Duration> {
        self.previous.as_ref().first().copied().flatten()
    }

    /// Keeps the delay just granted, if the previous delay is kept.
    #[inline(always)]
    fn set_previous(&mut self, delay: Option<Duration>) {
        if let Some(kept) = self.previous.as_mut().first_mut() {
            *kept = delay;
        }
    }

    /// Failed attempts so far.
    pub fn attempt(&self) -> u32 {
        self.failures
    }

    /// Why the call gave up, once it has.
    fn ended(&self) -> Option<GiveUpReason> {
        Some(match self.tally.checked_sub(GAVE_UP)? {
            0 => GiveUpReason::Attempts,
            1 => GiveUpReason::Stopped,
            _ => GiveUpReason::Deadline,
        })
    }

    /// The report of a call that gave up (no start time: `elapsed` zero).
    pub fn report(&self) -> GiveUp {
        let reason = self.ended().unwrap_or(GiveUpReason::Attempts);
        GiveUp::new(self.failures, Duration::ZERO, reason)
    }

    /// The random source of a step under `policy`: the policy's, with the
    /// call's `Jitter::Spread` phase if drawn.
    #[inline(always)]
    fn rng<S>(&self, policy: &Policy<S>) -> JitterRng {
        match self.phase {
            // (A constant for the attribute's policy types.)
            phase @ 1.. if matches!(policy.jitter_kind(), Jitter::Spread) => {
                policy.rng().with_phase(u32::from(phase) << 16 | 0x8000)
            }
            _ => policy.rng(),
        }
    }

    /// Keeps the phase `rng` drew under `policy`, if it drew one.
    #[inline(always)]
    fn keep_phase<S>(&mut self, policy: &Policy<S>, rng: &JitterRng) {
        if matches!(policy.jitter_kind(), Jitter::Spread)
            && let phase @ 1.. = rng.phase
        {
            self.phase = ((phase >> 16) as u16).max(1);
        }
    }

    /// The retry state this stands for, under `policy`: untimed, its
    /// counts, previous delay, phase and end as kept here.
    #[inline(always)]
    fn unpack<'p, S: Strategy>(&self, policy: &'p Policy<S>) -> RetryState<'p, S> {
        let mut state = RetryState::starting_at(policy, clock::system, None);
        let core = &mut state.core;
        core.failures = self.failures;
        core.previous = self.previous();
        core.rng = self.rng(policy);
        match self.ended() {
            None => core.skipped = u32::from(self.tally),
            Some(reason) => core.give_up_for(reason),
        }
        state
    }

    /// Keeps what `state`, [`unpack`](Carried::unpack)ed from this and
    /// stepped, has become.
    #[inline(always)]
    fn pack<S: Strategy>(&mut self, state: &RetryState<'_, S>) {
        let core = &state.core;
        self.failures = core.failures;
        self.set_previous(core.previous);
        self.keep_phase(state.policy, &core.rng);
        self.tally = match core.gave_up {
            None => core.skipped.min(u32::from(SKIPPED_MAX)) as u8,
            Some(GiveUpReason::Attempts) => GAVE_UP,
            Some(GiveUpReason::Stopped) => GAVE_UP + 1,
            Some(_) => GAVE_UP + 2,
        };
    }
}

impl<S: Strategy> Policy<S> {
    /// The common path of a step (a plain retry, within the attempt limit,
    /// nothing else to check): the failure counted, and the main
    /// schedule's delay for retry number `failures - skipped`, whatever
    /// form keeps the counts. No overflow: `failures < fast <= u32::MAX`.
    #[inline(always)]
    fn common_step(
        &self,
        failures: &mut u32,
        skipped: u32,
        previous: &mut Option<Duration>,
        rng: &mut JitterRng,
    ) -> Duration {
        *failures += 1;
        self.backoff(*failures - skipped, previous, rng)
    }

    /// [`RetryState::next_delay`] on the state `carried` stands for (under
    /// this policy, which must be unseeded, without kinds and without a
    /// deadline): the state's common path on the carried counts, else the
    /// state's own step on the state unpacked from `carried`, then packed
    /// back.
    #[inline(always)]
    pub(crate) fn next_carried<P: Previous>(&self, carried: &mut Carried<P>) -> Option<Duration> {
        // (`tally` is the skipped count while below `GAVE_UP`.)
        if carried.tally >= GAVE_UP || carried.failures >= fast(self) {
            return self.carried_retry_in_general(carried);
        }
        let (mut previous, mut rng) = (carried.previous(), carried.rng(self));
        let skipped = u32::from(carried.tally);
        let delay = self.common_step(&mut carried.failures, skipped, &mut previous, &mut rng);
        carried.set_previous(previous);
        carried.keep_phase(self, &rng);
        Some(delay)
    }

    /// [`next_carried_for`](Policy::next_carried_for) for a plain retry,
    /// which then passes no `Decision` (24 bytes, in memory).
    #[cold]
    #[inline(never)]
    fn carried_retry_in_general<P: Previous>(&self, carried: &mut Carried<P>) -> Option<Duration> {
        self.next_carried_for(carried, Decision::Retry)
    }

    /// [`RetryState::next_delay_for`] on the state `carried` stands for
    /// (see [`next_carried`](Policy::next_carried)), for any verdict: the
    /// state's own step. Out of line, so that the common path builds no
    /// state.
    #[cold]
    #[inline(never)]
    pub(crate) fn next_carried_for<P: Previous>(
        &self,
        carried: &mut Carried<P>,
        decision: Decision,
    ) -> Option<Duration> {
        let mut state = carried.unpack(self);
        let delay = state.next_delay_for(decision);
        carried.pack(&state);
        delay
    }
}

/// [`Core::fast`] of a state of `policy` that nothing else checks (no
/// deadline, budget or breaker).
#[inline(always)]
fn fast<S>(policy: &Policy<S>) -> u32 {
    match policy.attempt_limit() {
        // (With kinds, every verdict takes the general path, which keeps
        // the last failure's kind; with a throttled schedule, every verdict
        // after the first throttled one.)
        _ if !policy.settings().kinds.is_empty() || policy.settings().stop_at.is_some() => 0,
        // (A limit is at least 1.)
        Some(limit) => limit.saturating_sub(1),
        None => u32::MAX,
    }
}

/// The call's start, read from `clock` only if something needs the time:
/// `timed` (a hook reads `elapsed`), a deadline, or a stage that ends by
/// time.
#[inline]
pub fn began<S: Strategy>(policy: &Policy<S>, clock: Clock, timed: bool) -> Option<Instant> {
    let deadline = policy.elapsed_limit().is_some() || policy.settings().reset_after.is_some();
    (timed || deadline || policy.strategy().staging().timed).then(clock)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Jitter;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// What an `async fn` keeps between attempts (`Carried`) steps as the
    /// whole `RetryState` does: the same delays, the same give-up, the same
    /// report, for each deterministic strategy and limit (and, for the
    /// random `decorrelated`, delays within the same bounds).
    #[test]
    fn carried_steps_as_the_state_does() {
        use crate::strategy::{Constant, Decorrelated, Exponential, Fibonacci, Linear};
        fn same<S: Strategy>(policy: &Policy<S>, steps: usize) {
            // (Untimed, as the attribute starts it.)
            let mut state = RetryState::starting_at(policy, clock::system, None);
            let mut carried = Carried::<[Option<Duration>; 1]>::NEW;
            let mut lean = Carried::<[Option<Duration>; 0]>::NEW;
            for step in 0..steps {
                let (a, b) = (state.next_delay(), policy.next_carried(&mut carried));
                assert_eq!(a, b, "step {step}");
                assert_eq!(
                    a,
                    policy.next_carried(&mut lean),
                    "step {step}, no previous kept"
                );
                assert_eq!(state.attempt(), carried.attempt());
            }
            assert_eq!(state.give_up(), Some(carried.report()));
            assert_eq!(carried.report().reason, GiveUpReason::Attempts);
        }
        fn none<S: Strategy>(s: S) -> Policy<S> {
            Policy::from_strategy(s).jitter(Jitter::None)
        }
        same(&none(Exponential::new(MS(10))).attempts(6), 8);
        same(
            &none(Exponential::new(MS(10)).max_delay(MS(45))).attempts(9),
            9,
        );
        same(&none(Linear::new(MS(10)).max_delay(MS(25))).attempts(5), 6);
        same(&none(Constant::new(MS(3))).attempts(2), 3);
        same(&none(Fibonacci::new(MS(1))).attempts(9), 9);
        same(&Policy::immediate().attempts(1), 2);
        let decorrelated =
            Policy::from_strategy(Decorrelated::new(MS(5)).max_delay(MS(100))).unlimited_attempts();
        let mut carried = Carried::<[Option<Duration>; 1]>::NEW;
        for _ in 0..50 {
            let d = decorrelated
                .next_carried(&mut carried)
                .expect("unlimited here");
            assert!(d >= MS(5) && d <= MS(100), "{d:?}");
        }
    }

    /// The same, for every verdict a `when` may give: a sequence of
    /// decisions (`Stop`, `RetryAfter` within or past the limit, `Retry`,
    /// `Throttled`), stepped through a `Carried` and a `RetryState` alike,
    /// delay by delay, then the report.
    fn same_for<S: Strategy>(policy: &Policy<S>, decisions: &[Decision]) {
        let mut state = RetryState::starting_at(policy, clock::system, None);
        let mut carried = Carried::<[Option<Duration>; 1]>::NEW;
        let mut lean = Carried::<[Option<Duration>; 0]>::NEW;
        for (step, &decision) in decisions.iter().enumerate() {
            let a = state.next_delay_for(decision);
            assert_eq!(
                a,
                policy.next_carried_for(&mut carried, decision),
                "step {step}: {decision:?}"
            );
            assert_eq!(
                a,
                policy.next_carried_for(&mut lean, decision),
                "step {step}, lean"
            );
            assert_eq!(state.attempt(), carried.attempt(), "step {step}");
            assert_eq!(state.attempt(), lean.attempt(), "step {step}");
        }
        match state.give_up() {
            Some(report) => {
                assert_eq!(report, carried.report());
                assert_eq!(report, lean.report());
            }
            None => assert_eq!(carried.ended(), None),
        }
    }

    #[test]
    fn carried_steps_every_verdict_as_the_state_does() {
        use crate::strategy::{Exponential, Fibonacci};
        use Decision::{Retry, RetryAfter, Stop, Throttled};
        // (The skipped count is in what was padding.)
        assert_eq!(size_of::<Carried<[Option<Duration>; 0]>>(), 8);
        assert_eq!(size_of::<Carried<[Option<Duration>; 1]>>(), 24);
        let p = Policy::from_strategy(Exponential::new(MS(10)).max_delay(MS(1000)))
            .jitter(Jitter::None)
            .attempts(8)
            .retry_after_max(MS(500));
        same_for(&p, &[Retry, RetryAfter(MS(7)), Retry, Retry, Stop, Retry]);
        same_for(&p, &[RetryAfter(MS(7)), RetryAfter(MS(501)), Retry]);
        same_for(
            &p,
            &[Throttled, RetryAfter(MS(500)), Throttled, Retry, Retry],
        );
        same_for(&p, &[RetryAfter(MS(1)); 9]);
        same_for(&p, &[Stop]);
        // Past the limit, the attempt limit comes first, as the state's.
        let once = Policy::immediate().attempts(1);
        same_for(&once, &[RetryAfter(MS(600_000))]);
        same_for(&once, &[Stop]);
        let f = Policy::from_strategy(Fibonacci::new(MS(1)))
            .jitter(Jitter::None)
            .unlimited_attempts();
        // As many `RetryAfter`s as a `Carried` counts (see `SKIPPED_MAX`).
        let mut many = vec![RetryAfter(MS(2)); usize::from(SKIPPED_MAX)];
        many.extend([Retry, Retry, Retry, Stop]);
        same_for(&f, &many);
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// Any mixed sequence of verdicts, under any deterministic
        /// strategy and limit.
        #[test]
        fn carried_steps_any_verdicts_as_the_state_does(
            kind in 0u8..5,
            attempts in proptest::option::of(1u32..12),
            limit in 0u64..50,
            decisions in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(Decision::Retry),
                    proptest::strategy::Just(Decision::Throttled),
                    proptest::strategy::Just(Decision::Stop),
                    (0u64..80).prop_map(|ms| Decision::RetryAfter(MS(ms))),
                ],
                0..16,
            ),
        ) {
            use crate::strategy::{Constant, Exponential, Fibonacci, Linear};
            fn limited<S: Strategy>(p: Policy<S>, attempts: Option<u32>, limit: u64) -> Policy<S> {
                let p = p.jitter(Jitter::None).retry_after_max(MS(limit));
                match attempts {
                    Some(n) => p.attempts(n),
                    None => p.unlimited_attempts(),
                }
            }
            match kind {
                0 => same_for(
                    &limited(Policy::from_strategy(Exponential::new(MS(10)).max_delay(MS(300))), attempts, limit),
                    &decisions,
                ),
                1 => same_for(
                    &limited(Policy::from_strategy(Linear::new(MS(10)).max_delay(MS(45))), attempts, limit),
                    &decisions,
                ),
                2 => same_for(&limited(Policy::from_strategy(Constant::new(MS(3))), attempts, limit), &decisions),
                3 => same_for(&limited(Policy::from_strategy(Fibonacci::new(MS(1))), attempts, limit), &decisions),
                _ => same_for(&limited(Policy::immediate(), attempts, limit), &decisions),
            }
        }
    }

    /// Main attempts 3, throttled attempts 10, no jitter: 100 ms · k for
    /// the main schedule, 1 s · k for the throttled one.
    fn two_kinds() -> Policy {
        Policy::linear(MS(100))
            .jitter(Jitter::None)
            .attempts(3)
            .throttled(Policy::linear(MS(1000)).jitter(Jitter::None).attempts(10))
    }

    #[test]
    fn a_throttled_failure_and_a_transient_one_each_count_their_own() {
        use Decision::{Retry, Throttled};
        let p = two_kinds();
        let mut s = p.start();
        // Four throttled failures: within the throttled limit, and none
        // counted against the main one.
        for k in 1..=4 {
            assert_eq!(s.next_delay_for(Throttled), Some(MS(1000) * k));
            assert_eq!(s.failure_kind(), Some("throttled"));
        }
        // Two transient failures still retry, on the main schedule's
        // first two delays.
        assert_eq!(s.next_delay_for(Retry), Some(MS(100)));
        assert_eq!(s.failure_kind(), None);
        assert_eq!(s.event(MS(100)).failure_kind, None);
        assert_eq!(s.next_delay_for(Retry), Some(MS(200)));
        // A throttled one between them waits the throttled delay 5.
        assert_eq!(s.next_delay_for(Throttled), Some(MS(5000)));
        assert_eq!(s.event(MS(5000)).failure_kind, Some("throttled"));
        // The third transient failure reaches the main limit.
        assert_eq!(s.next_delay_for(Retry), None);
        let report = s.give_up().unwrap();
        assert_eq!(
            (report.attempts, report.reason, report.failure_kind),
            (8, GiveUpReason::Attempts, None)
        );
    }

    #[test]
    fn the_nth_throttled_failure_ends_the_call() {
        use Decision::{Retry, RetryAfter, Throttled};
        let p = Policy::immediate()
            .attempts(3)
            .throttled(Policy::constant(MS(50)).jitter(Jitter::None).attempts(3));
        let mut s = p.start();
        assert_eq!(s.next_delay_for(Throttled), Some(MS(50)));
        assert_eq!(s.next_delay_for(Retry), Some(Duration::ZERO));
        assert_eq!(s.next_delay_for(Throttled), Some(MS(50)));
        // A server's word counts against the main limit: its second
        // failure of three.
        assert_eq!(s.next_delay_for(RetryAfter(MS(7))), Some(MS(7)));
        assert_eq!(s.next_delay_for(Throttled), None, "the 3rd throttled");
        let report = s.give_up().unwrap();
        assert_eq!(
            (report.attempts, report.reason, report.failure_kind),
            (5, GiveUpReason::Attempts, Some("throttled"))
        );
        // Throttled failures alone: the throttled limit, not the main one.
        let mut s = p.start();
        let waits = std::iter::from_fn(|| s.next_delay_for(Throttled)).count();
        assert_eq!((waits, s.attempt()), (2, 3));
        assert_eq!(s.give_up().unwrap().failure_kind, Some("throttled"));
    }

    /// The last attempt the two limits allow is `main + throttled - 1`,
    /// whatever the order of the kinds, and `is_last_attempt` says so.
    #[test]
    fn the_last_attempt_is_the_one_both_limits_allow() {
        use Decision::{Retry, Throttled};
        let p = Policy::immediate()
            .attempts(3)
            .throttled(Policy::immediate().attempts(4));
        for order in [
            [Retry, Retry, Throttled, Throttled, Throttled],
            [Throttled, Throttled, Throttled, Retry, Retry],
            [Throttled, Retry, Throttled, Retry, Throttled],
        ] {
            let mut s = p.start();
            for (i, &d) in order.iter().enumerate() {
                assert!(!p.is_last_attempt(s.attempt() + 1), "{order:?}");
                assert!(s.next_delay_for(d).is_some(), "{order:?} step {i}");
            }
            assert!(p.is_last_attempt(s.attempt() + 1));
            for last in [Retry, Throttled] {
                let mut t = p.start();
                order
                    .iter()
                    .for_each(|&d| assert!(t.next_delay_for(d).is_some()));
                assert_eq!(t.next_delay_for(last), None);
                assert_eq!(t.attempt(), 6);
                assert_eq!(t.give_up_reason(), Some(GiveUpReason::Attempts));
            }
        }
        let unlimited = Policy::immediate()
            .attempts(3)
            .throttled(Policy::immediate().unlimited_attempts());
        assert!(!unlimited.is_last_attempt(u32::MAX));
        let mut s = unlimited.start();
        // (Throttled failures never count against the main limit.)
        for _ in 0..1_000 {
            assert_eq!(s.next_delay_for(Throttled), Some(Duration::ZERO));
        }
        assert!(s.next_delay_for(Retry).is_some());
        assert!(s.next_delay_for(Retry).is_some());
        assert_eq!(s.next_delay_for(Retry), None);
        assert_eq!(s.give_up_reason(), Some(GiveUpReason::Attempts));
    }

    /// A throttled kind of any strategy, or of none.
    #[test]
    fn a_throttled_kind_may_be_any_schedule_or_none() {
        use crate::strategy::{Chain, Constant, Immediate};
        static CHAIN: Policy<Chain<Immediate, Constant>> = Policy::from_strategy(Chain::new(
            Immediate,
            1,
            Constant::new(Duration::from_millis(30)),
        ))
        .attempts(4);
        static POLICY: Policy = Policy::immediate()
            .attempts(2)
            .throttled_kind(Kind::of("rate_limited", &CHAIN));
        let mut s = POLICY.start();
        let waits: Vec<_> = std::iter::from_fn(|| s.next_delay_for(Decision::Throttled)).collect();
        assert_eq!(waits, [Duration::ZERO, MS(30), MS(30)]);
        assert_eq!(s.give_up().unwrap().failure_kind, Some("rate_limited"));
        // A kind without a schedule: the first throttled failure stops.
        let stop = Policy::immediate().throttled_kind(Kind::named("throttled"));
        assert!(stop.is_last_attempt(3));
        let mut s = stop.start();
        assert!(s.next_delay().is_some());
        assert_eq!(s.next_delay_for(Decision::Throttled), None);
        assert_eq!(s.give_up_reason(), Some(GiveUpReason::Stopped));
        assert_eq!(s.give_up().unwrap().failure_kind, Some("throttled"));
    }

    /// A limit above what a call counts is taken as the largest, as for
    /// a kind.
    /// A policy built by hand with both a table of kinds and a throttled
    /// schedule (the attribute refuses the pair) counts the throttled
    /// failures apart from the table's first kind: each schedule's delays
    /// and limit follow its own failures.
    #[test]
    fn a_throttled_kind_beside_a_table_counts_apart() {
        use Decision::{Kind as K, Throttled};
        static KINDS: [Kind; 1] = [Kind::new(
            "conflict",
            Policy::linear(Duration::from_millis(10))
                .jitter(Jitter::None)
                .attempts(3),
        )];
        static POLICY: Policy = Policy::immediate()
            .unlimited_attempts()
            .kinds(&KINDS)
            .throttled(
                Policy::linear(Duration::from_secs(1))
                    .jitter(Jitter::None)
                    .attempts(3),
            );
        let mut s = POLICY.start();
        assert_eq!(s.next_delay_for(K(0)), Some(MS(10)));
        assert_eq!(s.next_delay_for(Throttled), Some(MS(1000)));
        assert_eq!(s.failure_kind(), Some("throttled"));
        assert_eq!(s.next_delay_for(K(0)), Some(MS(20)));
        assert_eq!(s.failure_kind(), Some("conflict"));
        assert_eq!(s.next_delay_for(Throttled), Some(MS(2000)));
        // Each kind's third failure reaches its own limit of 3.
        assert_eq!(s.next_delay_for(Throttled), None);
        assert_eq!(s.give_up_reason(), Some(GiveUpReason::Attempts));
        assert_eq!(s.give_up().unwrap().failure_kind, Some("throttled"));
    }

    #[test]
    fn a_throttled_limit_is_at_most_what_a_call_counts() {
        let p = Policy::immediate()
            .attempts(1)
            .throttled(Policy::immediate().attempts(1_000));
        let mut s = p.start();
        let retries = (0..2_000)
            .take_while(|_| s.next_delay_for(Decision::Throttled).is_some())
            .count();
        assert_eq!(retries as u32, crate::kind::MAX_KIND_ATTEMPTS - 1);
        assert!(p.is_last_attempt(crate::kind::MAX_KIND_ATTEMPTS));
    }

    #[test]
    fn attempts_limit_retries() {
        let p = Policy::immediate().attempts(3);
        let mut s = p.start();
        assert_eq!(s.next_delay(), Some(Duration::ZERO));
        assert_eq!(s.next_delay(), Some(Duration::ZERO));
        assert_eq!(s.next_delay(), None);
        assert!(s.is_done());
        assert_eq!(
            s.next_delay_for(Decision::RetryAfter(MS(1))),
            None,
            "stays done"
        );
    }

    #[test]
    fn the_common_path_and_the_general_one_count_alike() {
        // Plain retries take the common path, the others the general one;
        // the attempt limit and the schedule see every failure either way.
        let p = Policy::exponential(MS(100))
            .jitter(Jitter::None)
            .attempts(5);
        let mut s = p.start();
        assert_eq!(s.next_delay(), Some(MS(100)));
        assert_eq!(s.next_delay_for(Decision::RetryAfter(MS(7))), Some(MS(7)));
        assert_eq!(s.next_delay(), Some(MS(200)));
        assert_eq!(s.next_delay(), Some(MS(400)));
        assert_eq!(s.attempt(), 4);
        assert_eq!(s.next_delay(), None, "attempt 5 is the last");
        assert_eq!(s.give_up_reason(), Some(GiveUpReason::Attempts));
        assert_eq!(s.next_delay(), None);
        assert_eq!(s.attempt(), 5, "a call that gave up counts nothing more");
        // One attempt: the first failure gives up.
        let once = Policy::immediate().attempts(1);
        let mut s = once.start();
        assert_eq!((s.next_delay(), s.attempt()), (None, 1));
        // A budget or a breaker added after `start` sends every failure
        // through the checks.
        let budget = RetryBudget::new(1, 0.0);
        let p = Policy::immediate().unlimited_attempts();
        let mut s = p.start().with_budget(&budget);
        assert_eq!(s.next_delay(), Some(Duration::ZERO));
        assert_eq!(s.next_delay(), None);
        assert_eq!(s.give_up_reason(), Some(GiveUpReason::Budget));
    }

    #[test]
    fn counts_saturate_without_a_limit() {
        let p = Policy::linear(MS(1))
            .jitter(Jitter::None)
            .max_delay(Duration::MAX)
            .unlimited_attempts();
        let mut s = p.start();
        (s.core.failures, s.core.skipped) = (u32::MAX - 2, 1);
        let at = |k: u32| MS(1) * k;
        assert_eq!(s.next_delay(), Some(at(u32::MAX - 2)));
        assert_eq!(s.next_delay_for(Decision::RetryAfter(MS(3))), Some(MS(3)));
        assert_eq!(
            (s.core.failures, s.core.failures - s.core.skipped),
            (u32::MAX, u32::MAX - 2)
        );
        // Past `u32::MAX` failures: still retrying, the schedule still
        // advancing to its last step.
        assert_eq!(s.next_delay(), Some(at(u32::MAX - 1)));
        assert_eq!(s.next_delay(), Some(at(u32::MAX)));
        assert_eq!(s.next_delay(), Some(at(u32::MAX)));
        assert_eq!(
            (s.core.failures, s.core.failures - s.core.skipped),
            (u32::MAX, u32::MAX)
        );
        // With a limit of `u32::MAX` calls, the last failure gives up.
        let p = Policy::immediate().attempts(u32::MAX);
        let mut s = p.start();
        s.core.failures = u32::MAX - 2;
        assert!(s.next_delay().is_some());
        assert_eq!(s.next_delay(), None);
        assert_eq!(s.attempt(), u32::MAX);
    }

    #[test]
    fn stop_gives_up_at_once() {
        let p = Policy::immediate().unlimited_attempts();
        let mut s = p.start();
        assert_eq!(s.next_delay_for(Decision::Stop), None);
        assert_eq!(s.attempt(), 1);
    }

    #[test]
    fn retry_after_is_exact_and_uncapped_but_bound_by_attempts() {
        let p = Policy::exponential(MS(100)).max_delay(MS(200)).attempts(2);
        let mut s = p.start();
        let long = Duration::from_secs(60);
        assert_eq!(s.next_delay_for(Decision::RetryAfter(long)), Some(long));
        assert_eq!(s.next_delay_for(Decision::RetryAfter(long)), None);
    }

    #[test]
    fn retry_after_does_not_advance_the_schedule() {
        let p = Policy::exponential(MS(100))
            .jitter(Jitter::None)
            .attempts(10);
        let mut s = p.start();
        assert_eq!(s.next_delay(), Some(MS(100)));
        assert_eq!(s.next_delay_for(Decision::RetryAfter(MS(7))), Some(MS(7)));
        assert_eq!(s.next_delay(), Some(MS(200)));
    }

    #[test]
    fn retry_after_bound_is_inclusive_and_a_refusal_spends_no_token() {
        let budget = RetryBudget::new(10, 0.1);
        let p = Policy::immediate().unlimited_attempts();
        let limit = p.retry_after_limit();
        let mut s = p.start().with_budget(&budget);
        assert_eq!(s.next_delay_for(Decision::RetryAfter(limit)), Some(limit));
        let tokens = budget.tokens();
        let over = limit + Duration::from_nanos(1);
        assert_eq!(s.next_delay_for(Decision::RetryAfter(over)), None);
        assert_eq!(s.give_up_reason(), Some(GiveUpReason::Deadline));
        assert_eq!(budget.tokens(), tokens, "a refused wait spent a token");
        // The attempt limit is checked first; `Duration::MAX` lifts the bound.
        let one = Policy::immediate().attempts(1);
        let mut last = one.start();
        assert_eq!(
            last.next_delay_for(Decision::RetryAfter(Duration::MAX)),
            None
        );
        assert_eq!(last.give_up_reason(), Some(GiveUpReason::Attempts));
        let any = Policy::immediate().retry_after_max(Duration::MAX);
        let max = Decision::RetryAfter(Duration::MAX);
        assert_eq!(any.start().next_delay_for(max), Some(Duration::MAX));
    }

    #[test]
    fn deadline_refuses_a_sleep_that_would_cross_it() {
        let p = Policy::constant(MS(400))
            .jitter(Jitter::None)
            .unlimited_attempts()
            .max_elapsed(MS(1000));
        let mut s = p.start_with_clock(frozen);
        // The clock is frozen, so only the sleeps count: 400 + 400 < 1000,
        // and each sleep is checked alone against the elapsed time (zero).
        assert_eq!(s.next_delay(), Some(MS(400)));
        let mut s2 = p.start_with_clock(frozen);
        assert_eq!(s2.next_delay_for(Decision::RetryAfter(MS(1001))), None);
        let mut s3 = p.start_with_clock(frozen);
        assert_eq!(
            s3.next_delay_for(Decision::RetryAfter(MS(1000))),
            Some(MS(1000))
        );
    }

    fn frozen() -> Instant {
        use std::sync::OnceLock;
        static T: OnceLock<Instant> = OnceLock::new();
        *T.get_or_init(Instant::now)
    }

    /// A clock that counts its reads, and the count: each use has a
    /// counter of its own (tests run in parallel).
    macro_rules! counting_clock {
        () => {{
            use core::sync::atomic::{AtomicU32, Ordering};
            static READS: AtomicU32 = AtomicU32::new(0);
            fn counting() -> Instant {
                READS.fetch_add(1, Ordering::Relaxed);
                Instant::now()
            }
            fn reads() -> u32 {
                READS.load(Ordering::Relaxed)
            }
            (counting as Clock, reads)
        }};
    }

    #[test]
    fn untimed_success_reads_no_clock_and_draws_nothing() {
        let (counting, reads) = counting_clock!();
        let p = Policy::default();
        let s = RetryState::starting_at(&p, counting, began(&p, counting, false));
        assert_eq!(reads(), 0);
        assert!(!s.core.rng.has_drawn());
        let timed = Policy::default().max_elapsed(MS(5));
        let _ = RetryState::starting_at(&timed, counting, began(&timed, counting, false));
        assert_eq!(reads(), 1);
    }

    #[test]
    fn a_success_through_a_closed_breaker_reads_no_clock() {
        let (counting, reads) = counting_clock!();
        static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(60));
        let p = Policy::default();
        let mut s = RetryState::starting_at(&p, counting, began(&p, counting, false))
            .with_circuit(&BREAKER);
        s.before_attempt().unwrap();
        s.on_success();
        assert_eq!(reads(), 0);
    }

    #[test]
    fn the_give_up_report_reads_the_clock_once() {
        let (counting, reads) = counting_clock!();
        let p = Policy::immediate();
        let mut s = RetryState::starting_at(&p, counting, began(&p, counting, true));
        assert_eq!(s.next_delay_for(Decision::Stop), None);
        let before = reads();
        let report = s.report();
        assert_eq!(report.reason, GiveUpReason::Stopped);
        // `elapsed` at giving up: one read, not a second one for a
        // fallback record that is not used.
        assert_eq!(reads(), before + 1);
    }

    #[test]
    fn event_reports_attempt_delay_and_elapsed() {
        let p = Policy::immediate();
        let mut s = p.start();
        let d = s.next_delay().unwrap();
        let ev = s.event(d);
        assert_eq!((ev.attempt, ev.delay), (1, Duration::ZERO));
    }

    /// A hand-written loop under `reset_after`: a failure after a long
    /// attempt begins a new run (the first delay again, the attempt limit
    /// counted from it, `context().last` of the run), the attempt count
    /// and the report spanning every run.
    #[test]
    fn a_hand_loop_counts_runs() {
        use core::sync::atomic::{AtomicU64, Ordering};
        static NOW_MS: AtomicU64 = AtomicU64::new(0);
        fn clock() -> Instant {
            static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
            *BASE.get_or_init(Instant::now) + MS(NOW_MS.load(Ordering::Relaxed))
        }
        let p = Policy::exponential(MS(100))
            .jitter(Jitter::None)
            .attempts(2)
            .reset_after(MS(1_000));
        let mut s = p.start_with_clock(clock);
        assert_eq!((s.context().attempt, s.context().last), (1, false));
        assert_eq!(s.next_delay(), Some(MS(100)));
        assert_eq!(
            (s.context().attempt, s.context().last, s.event(MS(0)).run),
            (2, true, 1)
        );
        // Attempt 2 starts at 100 ms and runs 5 s.
        NOW_MS.store(5_100, Ordering::Relaxed);
        assert_eq!(s.next_delay(), Some(MS(100)), "the first delay again");
        assert_eq!((s.attempt(), s.event(MS(0)).run), (2, 2));
        assert_eq!((s.context().attempt, s.context().last), (3, true));
        let ev = s.event(MS(100));
        assert_eq!((ev.attempt, ev.run), (2, 2));
        // Attempt 3 fails at once: run 2's second, its last.
        NOW_MS.store(5_200, Ordering::Relaxed);
        assert_eq!(s.next_delay(), None);
        assert_eq!(s.give_up().unwrap().attempts, 3);
        // Without `reset_after`: one run, and no clock for it.
        assert_eq!(Policy::immediate().start().event(MS(0)).run, 1);
    }

    #[test]
    fn state_is_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<RetryState<'static>>();
    }
}
