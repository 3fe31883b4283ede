//! The feature `record`'s half of the module: the facade (the
//! [`Recorder`] trait, its events, the installed recorder) and a call's
//! live recording ([`Live`]: the clock reads and the events it tells).

use core::fmt;
use core::time::Duration;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

use crate::clock::Clock;

use crate::circuit::CircuitState;
use crate::event::AttemptKind;
use crate::report::{GiveUpReason, named};

/// What is told of retried calls, breakers and budgets: one method per
/// event, each empty unless implemented (implement what you record).
///
/// A recorder is called on the thread that made the call, in the call's
/// path: keep each method short, and never block in it. It must not make
/// retried calls itself (they would record into it again).
///
/// ```
/// use backoff_runtime::record::{AttemptEnded, AttemptOutcome, Recorder};
///
/// /// Prints each attempt that failed.
/// struct Print;
///
/// impl Recorder for Print {
///     fn attempt_ended(&self, attempt: &AttemptEnded) {
///         if attempt.outcome != AttemptOutcome::Ok {
///             eprintln!("{} attempt {}: {}", attempt.function, attempt.number, attempt.outcome.as_str());
///         }
///     }
/// }
/// ```
#[allow(unused_variables)] // (the defaults ignore what they are told)
pub trait Recorder: Send + Sync {
    /// An attempt ended. A hedged call's attempts still in flight when the
    /// call ends are told as [`AttemptOutcome::Cancelled`] before the
    /// call's end; an attempt a `timeout` cancelled has no end and is not
    /// told.
    fn attempt_ended(&self, attempt: &AttemptEnded) {}

    /// A call ended: it returned an accepted outcome, or gave up.
    fn call_ended(&self, call: &CallEnded) {}

    /// The call of `function` is retried after `delay` (a hedged call's
    /// next attempt, which starts at once, is granted with a zero delay).
    fn retry_delay(&self, function: &'static str, delay: Duration) {}

    /// The breaker named `breaker` changed to `state`.
    fn breaker_state(&self, breaker: &'static str, state: CircuitState) {}

    /// The budget named `budget` has `tokens` left, after a spend or a
    /// refill.
    fn budget_tokens(&self, budget: &'static str, tokens: f64) {}

    /// A remote that shared controls sync with (a fleet's store, such as
    /// `backoff_redis::RedisStore`, named `remote`) answered for the first
    /// time, stopped answering (`reachable` false: its syncs keep failing
    /// and its controls run locally) or answers again. Told at its first
    /// answer and on each change, from the remote's own thread, never from
    /// a call's.
    fn remote_reachable(&self, remote: &str, reachable: bool) {}
}

named! {
    /// How an attempt ended.
    ///
    /// ```
    /// use backoff_runtime::record::AttemptOutcome;
    ///
    /// assert_eq!(AttemptOutcome::RejectedOk.as_str(), "rejected_ok");
    /// assert_eq!(AttemptOutcome::Cancelled.as_str(), "cancelled");
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[non_exhaustive]
    pub enum AttemptOutcome {
        /// An accepted `Ok`: the call ends with it.
        Ok = "ok",
        /// An error.
        Error = "error",
        /// An `Ok` that `when_ok` rejected.
        RejectedOk = "rejected_ok",
        /// Dropped unfinished because the call ended without it: a hedged
        /// call's attempt still in flight when another attempt's outcome ended
        /// the call (it was a real request: hedging's extra load).
        Cancelled = "cancelled",
    }

    /// `ok`, `error`, `rejected_ok` or `cancelled`.
    as_str;
}

named! {
    /// How a call ended.
    ///
    /// ```
    /// use backoff_runtime::GiveUpReason;
    /// use backoff_runtime::record::CallOutcome;
    ///
    /// let outcome = CallOutcome::GaveUp(GiveUpReason::Attempts);
    /// assert_eq!(outcome.as_str(), "gave_up");
    /// assert!(matches!(outcome, CallOutcome::GaveUp(GiveUpReason::Attempts)));
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[non_exhaustive]
    pub enum CallOutcome {
        /// It returned an accepted `Ok`.
        Ok = "ok",
        /// It gave up, for this reason.
        GaveUp(GiveUpReason) = "gave_up",
    }

    /// `ok` or `gave_up`.
    as_str;
}

/// An attempt that ended (see [`Recorder::attempt_ended`]).
///
/// `start` and `end` are read from the loop's clock: `Instant::now` for
/// blocking loops, tokio's for async ones (paused in tests, so durations
/// are exact there). Compare them with each other, not with
/// `Instant::now()`.
///
/// ```
/// use backoff_runtime::record::AttemptEnded;
///
/// fn seconds(attempt: &AttemptEnded) -> f64 {
///     attempt.end.saturating_duration_since(attempt.start).as_secs_f64()
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AttemptEnded {
    /// The call's name (see the module's "Names").
    pub function: &'static str,
    /// `Original` for the first attempt, `Retry` after it, `Hedge` for a
    /// hedged call's attempts started by its delay.
    pub kind: AttemptKind,
    /// The attempt's number in its call, from 1.
    pub number: u32,
    /// Its call: the same for every attempt of a call and its
    /// [`CallEnded`].
    pub call: CallId,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// When it began.
    pub start: Instant,
    /// When it ended.
    pub end: Instant,
}

/// A call that ended (see [`Recorder::call_ended`]).
///
/// ```
/// use backoff_runtime::record::{CallEnded, CallOutcome};
///
/// fn gave_up(call: &CallEnded) -> bool {
///     matches!(call.outcome, CallOutcome::GaveUp(_))
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallEnded {
    /// The call's name (see the module's "Names").
    pub function: &'static str,
    /// Which call it is (as its attempts' [`AttemptEnded::call`]).
    pub call: CallId,
    /// How it ended; a call an open breaker refuses gave up with
    /// [`GiveUpReason::CircuitOpen`].
    pub outcome: CallOutcome,
    /// The attempts it made (started, for a hedged call: the cancelled ones
    /// too); 0 for a call refused before its first attempt.
    pub attempts: u32,
    /// Its whole time, its attempts and sleeps included, on the loop's
    /// clock.
    pub duration: Duration,
    /// For a call that gave up under a policy with a schedule per kind
    /// ([`Policy::kinds`](crate::Policy::kinds); `#[retry(on(..))]`), the
    /// kind of its last failure (the `on(..)` arm's pattern text); `None`
    /// otherwise.
    pub failure_kind: Option<&'static str>,
}

/// Which call an event belongs to: equal for the events of one call, and
/// different for any two calls in flight at the same time, so a recorder
/// can keep what it builds per call (a span, say) until the call's
/// [`CallEnded`]. It is the call's start and a count of the calls that
/// began while a recorder was installed (wrapping at 2³²).
///
/// ```
/// use backoff_runtime::record::{AttemptEnded, CallEnded};
///
/// fn same_call(attempt: &AttemptEnded, call: &CallEnded) -> bool {
///     attempt.call == call.call
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallId {
    start: Instant,
    serial: u32,
}

impl CallId {
    /// The call `serial` that began at `start`.
    pub(crate) const fn new(start: Instant, serial: u32) -> Self {
        CallId { start, serial }
    }

    /// When the call began, on its loop's clock (as
    /// [`AttemptEnded::start`]).
    pub const fn start(self) -> Instant {
        self.start
    }
}

/// The recorder, once installed.
static RECORDER: OnceLock<&'static dyn Recorder> = OnceLock::new();

/// Whether [`RECORDER`] is set (see [`on`]).
static ON: AtomicBool = AtomicBool::new(false);

/// Installs `recorder` for the whole process: every call that begins from
/// now on tells it its events. A recorder is installed once; a second call
/// returns an error and changes nothing.
///
/// ```
/// use backoff_runtime::record::{self, Recorder};
///
/// struct Nothing;
/// impl Recorder for Nothing {}
///
/// static NOTHING: Nothing = Nothing;
/// assert!(record::set_recorder(&NOTHING).is_ok());
/// assert!(record::set_recorder(&NOTHING).is_err());
/// ```
pub fn set_recorder(recorder: &'static dyn Recorder) -> Result<(), SetRecorderError> {
    RECORDER.set(recorder).map_err(|_| SetRecorderError(()))?;
    // (After the recorder. A call that sees the flag reads the recorder
    // through the `OnceLock`'s own acquire load; on a weak memory model a
    // call that sees the flag in the instant it is set may still find none,
    // and its events are dropped, as a call's before it.)
    ON.store(true, Ordering::Release);
    Ok(())
}

/// The recorder [`set_recorder`] installed, if any. (For the crates that
/// report events of their own, `backoff-redis`, and
/// `backoff-opentelemetry`'s `is_installed`.)
#[doc(hidden)]
#[inline]
pub fn recorder() -> Option<&'static dyn Recorder> {
    RECORDER.get().copied()
}

/// Whether a recorder is installed: one relaxed atomic load. (A flag of its
/// own rather than the `OnceLock`'s state: the same one load, but the
/// compiler lays out the callers' branches as it did for the former
/// feature's flag, where the state's test cost `sync/retry_when` 2
/// instructions.)
#[inline(always)]
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Runs `f` with the recorder, if one is installed.
#[inline(always)]
pub(crate) fn with(f: impl FnOnce(&'static dyn Recorder)) {
    if let Some(recorder) = RECORDER.get() {
        f(*recorder);
    }
}

/// The error of [`set_recorder`] when a recorder is already installed.
///
/// ```
/// use backoff_runtime::record::{self, Recorder};
///
/// struct Nothing;
/// impl Recorder for Nothing {}
///
/// static NOTHING: Nothing = Nothing;
/// record::set_recorder(&NOTHING).unwrap();
/// let error = record::set_recorder(&NOTHING).unwrap_err();
/// assert_eq!(error.to_string(), "a recorder is already installed");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetRecorderError(());

impl fmt::Display for SetRecorderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a recorder is already installed")
    }
}

impl std::error::Error for SetRecorderError {}

/// A named breaker changed to `state`.
#[cold]
#[inline(never)]
pub(crate) fn breaker_state(name: &'static str, state: CircuitState) {
    with(|r| r.breaker_state(name, state));
}

/// A named budget has `tokens` left.
#[cold]
#[inline(never)]
pub(crate) fn budget_tokens(name: &'static str, tokens: f64) {
    with(|r| r.budget_tokens(name, tokens));
}

/// One call's recording, started when a recorder was installed as the call
/// began: the function, the times, the attempts counted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Live {
    pub(super) function: &'static str,
    pub(super) clock: Clock,
    pub(super) began: Instant,
    pub(super) attempt_began: Instant,
    pub(super) attempts: u32,
    /// The call's count (see [`CallId`]; in what would be padding: the
    /// recording stays 64 bytes).
    pub(super) serial: u32,
}

/// The calls that began recording, counted (see [`CallId`]).
pub(super) static CALLS: AtomicU32 = AtomicU32::new(0);

/// The process-wide anchor of [`nanos`].
static ANCHOR: OnceLock<Instant> = OnceLock::new();

/// `now` as 55 bits of nanoseconds from a process-wide anchor (see
/// [`nanos`]), wrapping, with the top bit of the 56 set (the flag of a
/// call that records).
pub(super) fn ticks(now: Instant) -> [u8; 7] {
    let t = (nanos(now) & TICKS | 1 << 55).to_le_bytes();
    [t[0], t[1], t[2], t[3], t[4], t[5], t[6]]
}

/// `now` in nanoseconds from a process-wide anchor, wrapping (before the
/// anchor, as it wraps: tokio's paused clock can read earlier than an
/// anchor another runtime set).
pub(super) fn nanos(now: Instant) -> u64 {
    // (A second before the first reading: a reading near it counts up.)
    let anchor = *ANCHOR.get_or_init(|| now.checked_sub(Duration::from_secs(1)).unwrap_or(now));
    match now.checked_duration_since(anchor) {
        Some(after) => after.as_nanos() as u64,
        None => 0u64.wrapping_sub(anchor.duration_since(now).as_nanos() as u64),
    }
}

/// The 55 bits of [`ticks`] that count.
const TICKS: u64 = (1 << 55) - 1;

/// The time from `then` to `now` (both from [`ticks`]): right for spans
/// under 2⁵⁵ ns (417 days).
pub(super) fn since(then: [u8; 7], now: [u8; 7]) -> Duration {
    let value = |t: [u8; 7]| u64::from_le_bytes([t[0], t[1], t[2], t[3], t[4], t[5], t[6], 0]);
    Duration::from_nanos(value(now).wrapping_sub(value(then)) & TICKS)
}

/// The outcome of a failed attempt.
#[inline(always)]
pub(super) fn outcome(rejected_ok: bool) -> AttemptOutcome {
    if rejected_ok {
        AttemptOutcome::RejectedOk
    } else {
        AttemptOutcome::Error
    }
}

impl Live {
    /// A call beginning now.
    #[cold]
    #[inline(never)]
    pub(super) fn begin(function: &'static str, clock: Clock) -> Option<Self> {
        let now = clock();
        Some(Live {
            function,
            clock,
            began: now,
            attempt_began: now,
            attempts: 0,
            serial: CALLS.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// Another attempt begins now (the first began with the call).
    #[cold]
    #[inline(never)]
    pub(super) fn attempt_starts(&mut self) {
        if self.attempts > 0 {
            self.attempt_began = (self.clock)();
        }
    }

    /// Tells the recorder of an attempt of this call that ended, and
    /// counts it.
    #[cold]
    #[inline(never)]
    pub(super) fn tell_attempt(
        &mut self,
        kind: AttemptKind,
        number: u32,
        outcome: AttemptOutcome,
        start: Instant,
        end: Instant,
    ) {
        self.attempts = self.attempts.saturating_add(1);
        let ended = AttemptEnded {
            function: self.function,
            kind,
            number,
            call: CallId::new(self.began, self.serial),
            outcome,
            start,
            end,
        };
        with(|r| r.attempt_ended(&ended));
    }

    /// Tells the recorder that the call ended at `now`, after
    /// `self.attempts` attempts: accepted (`reason` `None`) or given up
    /// (`failure_kind`: its last failure's kind, for a policy with kinds).
    fn tell_call(
        &self,
        reason: Option<GiveUpReason>,
        failure_kind: Option<&'static str>,
        now: Instant,
    ) {
        let ended = CallEnded {
            function: self.function,
            call: CallId::new(self.began, self.serial),
            outcome: reason.map_or(CallOutcome::Ok, CallOutcome::GaveUp),
            attempts: self.attempts,
            duration: now.saturating_duration_since(self.began),
            failure_kind,
        };
        with(|r| r.call_ended(&ended));
    }

    /// The attempt in flight ended with `outcome`, at `now` (its kind
    /// `Original` for the first, else `Retry`).
    fn attempt_ended(&mut self, outcome: AttemptOutcome, now: Instant) {
        let number = self.attempts.saturating_add(1);
        let kind = crate::AttemptContext::new(number, false).kind;
        self.tell_attempt(kind, number, outcome, self.attempt_began, now);
    }

    /// The attempt ended with `outcome` and the call goes on, after
    /// `delay`.
    #[cold]
    #[inline(never)]
    pub(super) fn retrying(&mut self, outcome: AttemptOutcome, delay: Duration) {
        self.attempt_ended(outcome, (self.clock)());
        let function = self.function;
        with(|r| r.retry_delay(function, delay));
    }

    /// The call ended, accepted (`reason` `None`) or given up for
    /// `reason`; `outcome` is its last attempt's, or `None` if no attempt
    /// ended (a breaker refused it, or a timeout cancelled the attempt in
    /// flight).
    #[cold]
    #[inline(never)]
    pub(super) fn ended(
        &mut self,
        outcome: Option<AttemptOutcome>,
        reason: Option<GiveUpReason>,
        failure_kind: Option<&'static str>,
    ) {
        let now = (self.clock)();
        if let Some(outcome) = outcome {
            self.attempt_ended(outcome, now);
        }
        self.tell_call(reason, failure_kind, now);
    }

    /// A hedged call ends, after `started` attempts (the cancelled ones
    /// included): accepted (`None`) or given up for `reason`; `in_flight`
    /// tells each attempt still running (its kind, number and start),
    /// dropped now: each is told as cancelled, before the call's end.
    #[cfg(feature = "tokio")]
    #[cold]
    #[inline(never)]
    pub(super) fn finished(
        &mut self,
        reason: Option<GiveUpReason>,
        started: u32,
        in_flight: &super::InFlight<'_>,
    ) {
        let now = (self.clock)();
        in_flight(&mut |kind, number, began| {
            self.tell_attempt(kind, number, AttemptOutcome::Cancelled, began, now);
        });
        self.attempts = started;
        self.tell_call(reason, None, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact loop's 7-byte start measures a call to the nanosecond,
    /// whether the reading is after the process's anchor or (tokio's paused
    /// clock of another runtime) before it, and across the 56-bit wrap.
    #[test]
    fn call_began_ticks_measure_exactly_around_the_anchor() {
        let anchor = Instant::now();
        assert_ne!(
            ticks(anchor)[6] & 0x80,
            0,
            "the flag of a call that records"
        );
        let ns = Duration::from_nanos;
        for (from, took) in [
            (anchor, ns(1_234_567_891)),
            (anchor - Duration::from_secs(3_600), ns(7)),
            (anchor - ns(10), ns(20)),
            (
                anchor + Duration::from_secs(86_400 * 400),
                Duration::from_secs(5),
            ),
        ] {
            assert_eq!(since(ticks(from), ticks(from + took)), took);
        }
        let (max, wrap) = ([0xff; 7], [0, 0, 0, 0, 0, 0, 0x80]);
        assert_eq!(since(max, wrap), ns(1));
    }

    #[test]
    fn failed_attempt_outcomes() {
        assert_eq!(
            [outcome(false), outcome(true)],
            [AttemptOutcome::Error, AttemptOutcome::RejectedOk]
        );
    }
}
