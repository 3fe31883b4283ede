//! A live recording (feature `record`): the clock reads and the events
//! told to the installed recorder.

use core::time::Duration;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use crate::clock::Clock;
use crate::event::AttemptKind;
use crate::record::{self, AttemptEnded, AttemptOutcome, CallEnded, CallId, CallOutcome};
use crate::report::GiveUpReason;

/// One call's recording, started when a recorder was installed as the call
/// began: the function, the times, the attempts counted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Live {
    function: &'static str,
    clock: Clock,
    began: Instant,
    attempt_began: Instant,
    attempts: u32,
    /// The call's count (see [`CallId`]; in what would be padding: the
    /// recording stays 64 bytes).
    serial: u32,
}

/// The calls that began recording, counted (see [`CallId`]).
static CALLS: AtomicU32 = AtomicU32::new(0);

/// The next call's count (see [`CallId`]).
pub(super) fn next_serial() -> u32 {
    CALLS.fetch_add(1, Ordering::Relaxed)
}

/// The process-wide anchor of [`ticks`].
static ANCHOR: OnceLock<Instant> = OnceLock::new();

/// `now` as 55 bits of nanoseconds from a process-wide anchor, wrapping
/// (before the anchor, as it wraps: tokio's paused clock can read earlier
/// than an anchor another runtime set), with the top bit of the 56 set
/// (the flag of a call that records).
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
fn since(then: [u8; 7], now: [u8; 7]) -> Duration {
    let value = |t: [u8; 7]| u64::from_le_bytes([t[0], t[1], t[2], t[3], t[4], t[5], t[6], 0]);
    Duration::from_nanos(value(now).wrapping_sub(value(then)) & TICKS)
}

/// `attempt.type` of attempt `number` (from 1) of a call that is not
/// hedged.
const fn attempt_kind(number: u32) -> AttemptKind {
    if number <= 1 {
        AttemptKind::Original
    } else {
        AttemptKind::Retry
    }
}

/// Tells the recorder of an attempt of `call` that ended.
fn attempt_ended(
    function: &'static str,
    call: CallId,
    kind: AttemptKind,
    number: u32,
    outcome: AttemptOutcome,
    start: Instant,
    end: Instant,
) {
    record::with(|r| {
        r.attempt_ended(&AttemptEnded {
            function,
            kind,
            number,
            call,
            outcome,
            start,
            end,
        });
    });
}

/// Tells the recorder of a call that ended (`failure_kind`: its last
/// failure's kind, for a policy with kinds).
fn call_ended(
    function: &'static str,
    call: CallId,
    reason: Option<GiveUpReason>,
    failure_kind: Option<&'static str>,
    attempts: u32,
    took: Duration,
) {
    let outcome = match reason {
        None => CallOutcome::Ok,
        Some(reason) => CallOutcome::GaveUp(reason),
    };
    record::with(|r| {
        r.call_ended(&CallEnded {
            function,
            call,
            outcome,
            attempts,
            duration: took,
            failure_kind,
        });
    });
}

impl Live {
    /// A call that began at `began` (from [`ticks`]) and whose attempt
    /// began at `attempt` (else the call's), after `attempts` attempts
    /// ended, the call's count `serial`: a compact loop's recording,
    /// resumed for one step.
    pub(super) fn resume(
        function: &'static str,
        clock: Clock,
        (began, serial): ([u8; 7], u32),
        attempt: Option<u64>,
        attempts: u32,
    ) -> Self {
        let now = clock();
        let ago = |elapsed: Duration| now.checked_sub(elapsed).unwrap_or(now);
        let began = ago(since(began, ticks(now)));
        let attempt_began = match attempt {
            Some(at) => ago(Duration::from_nanos(nanos(now).wrapping_sub(at))),
            None => began,
        };
        Live {
            function,
            clock,
            began,
            attempt_began,
            attempts,
            serial,
        }
    }

    /// Which call this is.
    fn call(&self) -> CallId {
        CallId::new(self.began, self.serial)
    }

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
            serial: next_serial(),
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

    /// The attempt in flight ended with `outcome`, at `now`.
    fn attempt_ended(&mut self, outcome: AttemptOutcome, now: Instant) {
        self.attempts = self.attempts.saturating_add(1);
        attempt_ended(
            self.function,
            self.call(),
            attempt_kind(self.attempts),
            self.attempts,
            outcome,
            self.attempt_began,
            now,
        );
    }

    /// The attempt ended with `outcome` and the call goes on, after
    /// `delay`.
    #[cold]
    #[inline(never)]
    pub(super) fn retrying(&mut self, outcome: AttemptOutcome, delay: Duration) {
        self.attempt_ended(outcome, (self.clock)());
        let function = self.function;
        record::with(|r| r.retry_delay(function, delay));
    }

    /// The attempt ended with an accepted `Ok`: the call succeeded.
    #[cold]
    #[inline(never)]
    pub(super) fn succeeded(&mut self) {
        let now = (self.clock)();
        self.attempt_ended(AttemptOutcome::Ok, now);
        call_ended(
            self.function,
            self.call(),
            None,
            None,
            self.attempts,
            now.saturating_duration_since(self.began),
        );
    }

    /// The call gave up for `reason` after `attempts` attempts that this
    /// recording did not see end (a hedged call past its `timeout`).
    #[cold]
    #[inline(never)]
    pub(super) fn gave_up_after(&mut self, attempts: u32, reason: GiveUpReason) {
        self.attempts = attempts;
        self.gave_up(None, reason, None);
    }

    /// The call gave up for `reason`; `outcome` is its last attempt's, or
    /// `None` if no attempt ended (a breaker refused it, or a timeout
    /// cancelled the attempt in flight).
    #[cold]
    #[inline(never)]
    pub(super) fn gave_up(
        &mut self,
        outcome: Option<AttemptOutcome>,
        reason: GiveUpReason,
        failure_kind: Option<&'static str>,
    ) {
        let now = (self.clock)();
        if let Some(outcome) = outcome {
            self.attempt_ended(outcome, now);
        }
        call_ended(
            self.function,
            self.call(),
            Some(reason),
            failure_kind,
            self.attempts,
            now.saturating_duration_since(self.began),
        );
    }

    /// A hedged call's attempt of kind `kind`, number `number` (as its
    /// `context` says), begun at `began`, ended now with `outcome` (the
    /// attempts of a hedged call overlap, so each keeps its own start and
    /// number).
    #[cfg(feature = "tokio")]
    #[cold]
    #[inline(never)]
    pub(super) fn hedged_attempt(
        &mut self,
        kind: AttemptKind,
        number: u32,
        began: Instant,
        outcome: AttemptOutcome,
    ) {
        self.attempts = self.attempts.saturating_add(1);
        let now = (self.clock)();
        attempt_ended(
            self.function,
            self.call(),
            kind,
            number,
            outcome,
            began,
            now,
        );
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
        let (function, call) = (self.function, self.call());
        in_flight(&mut |kind, number, began| {
            attempt_ended(
                function,
                call,
                kind,
                number,
                AttemptOutcome::Cancelled,
                began,
                now,
            );
        });
        let took = now.saturating_duration_since(self.began);
        call_ended(function, call, reason, None, started, took);
    }
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
    fn attempt_kinds_and_outcomes() {
        assert_eq!(
            [attempt_kind(1), attempt_kind(2), attempt_kind(u32::MAX)],
            [
                AttemptKind::Original,
                AttemptKind::Retry,
                AttemptKind::Retry
            ]
        );
        assert_eq!(
            [outcome(false), outcome(true)],
            [AttemptOutcome::Error, AttemptOutcome::RejectedOk]
        );
    }
}
