//! A call's recording: what the loops (and the attribute's expansion, through
//! `__private`) tell the installed [`Recorder`](crate::record::Recorder) of
//! a call, and what it costs while none is installed (one atomic load when
//! the call begins, no clock read).
//!
//! - [`Recording`]: a call's recording, begun with the call (64 bytes,
//!   `Copy`), for every loop but the attribute's compact `async fn` loop;
//! - [`CallBegan`] and [`AttemptBegan`]: the compact loop's, 7 bytes kept
//!   across its awaits and 8 bytes held only while an attempt runs;
//! - [`Records`]: what the driver tells of a call, implemented by those, by
//!   [`NoRecording`] (a loop that never records) and by the hedged call's
//!   per-attempt recording.

use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant;

use crate::clock::Clock;
use crate::event::AttemptKind;
use crate::record::{self, AttemptEnded, AttemptOutcome, CallEnded, CallOutcome};
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
}

/// The process-wide anchor of [`ticks`].
static ANCHOR: OnceLock<Instant> = OnceLock::new();

/// `now` as 55 bits of nanoseconds from a process-wide anchor, wrapping
/// (before the anchor, as it wraps: tokio's paused clock can read earlier
/// than an anchor another runtime set), with the top bit of the 56 set
/// (the flag of a call that records).
fn ticks(now: Instant) -> [u8; 7] {
    let t = (nanos(now) & TICKS | 1 << 55).to_le_bytes();
    [t[0], t[1], t[2], t[3], t[4], t[5], t[6]]
}

/// `now` in nanoseconds from a process-wide anchor, wrapping (before the
/// anchor, as it wraps: tokio's paused clock can read earlier than an
/// anchor another runtime set).
fn nanos(now: Instant) -> u64 {
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

/// Tells the recorder of an attempt that ended.
fn attempt_ended(
    function: &'static str,
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
            outcome,
            start,
            end,
        });
    });
}

/// Tells the recorder of a call that ended.
fn call_ended(function: &'static str, reason: Option<GiveUpReason>, attempts: u32, took: Duration) {
    let outcome = match reason {
        None => CallOutcome::Ok,
        Some(reason) => CallOutcome::GaveUp(reason),
    };
    record::with(|r| {
        r.call_ended(&CallEnded {
            function,
            outcome,
            attempts,
            duration: took,
        });
    });
}

impl Live {
    /// A call that began at `began` (from [`ticks`]) and whose attempt
    /// began at `attempt` (else the call's), after `attempts` attempts
    /// ended: a compact loop's recording, resumed for one step.
    fn resume(
        function: &'static str,
        clock: Clock,
        began: [u8; 7],
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
        }
    }

    /// A call beginning now.
    #[cold]
    #[inline(never)]
    fn begin(function: &'static str, clock: Clock) -> Option<Self> {
        let now = clock();
        Some(Live {
            function,
            clock,
            began: now,
            attempt_began: now,
            attempts: 0,
        })
    }

    /// Another attempt begins now (the first began with the call).
    #[cold]
    #[inline(never)]
    fn attempt_starts(&mut self) {
        if self.attempts > 0 {
            self.attempt_began = (self.clock)();
        }
    }

    /// The attempt in flight ended with `outcome`, at `now`.
    fn attempt_ended(&mut self, outcome: AttemptOutcome, now: Instant) {
        self.attempts = self.attempts.saturating_add(1);
        attempt_ended(
            self.function,
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
    fn retrying(&mut self, outcome: AttemptOutcome, delay: Duration) {
        self.attempt_ended(outcome, (self.clock)());
        let function = self.function;
        record::with(|r| r.retry_delay(function, delay));
    }

    /// The attempt ended with an accepted `Ok`: the call succeeded.
    #[cold]
    #[inline(never)]
    fn succeeded(&mut self) {
        let now = (self.clock)();
        self.attempt_ended(AttemptOutcome::Ok, now);
        call_ended(
            self.function,
            None,
            self.attempts,
            now.saturating_duration_since(self.began),
        );
    }

    /// The call gave up for `reason` after `attempts` attempts that this
    /// recording did not see end (a hedged call past its `timeout`).
    #[cold]
    #[inline(never)]
    fn gave_up_after(&mut self, attempts: u32, reason: GiveUpReason) {
        self.attempts = attempts;
        self.gave_up(None, reason);
    }

    /// The call gave up for `reason`; `outcome` is its last attempt's, or
    /// `None` if no attempt ended (a breaker refused it, or a timeout
    /// cancelled the attempt in flight).
    #[cold]
    #[inline(never)]
    fn gave_up(&mut self, outcome: Option<AttemptOutcome>, reason: GiveUpReason) {
        let now = (self.clock)();
        if let Some(outcome) = outcome {
            self.attempt_ended(outcome, now);
        }
        call_ended(
            self.function,
            Some(reason),
            self.attempts,
            now.saturating_duration_since(self.began),
        );
    }

    /// A hedged call's attempt of kind `kind`, begun at `began`, ended now
    /// with `outcome` (the attempts of a hedged call overlap, so each keeps
    /// its own start).
    #[cfg(feature = "tokio")]
    #[cold]
    #[inline(never)]
    fn hedged_attempt(&mut self, kind: AttemptKind, began: Instant, outcome: AttemptOutcome) {
        self.attempts = self.attempts.saturating_add(1);
        let now = (self.clock)();
        attempt_ended(self.function, kind, self.attempts, outcome, began, now);
    }

    /// A hedged call ends, after `started` attempts (the cancelled ones
    /// included): accepted (`None`) or given up for `reason`.
    #[cfg(feature = "tokio")]
    #[cold]
    #[inline(never)]
    fn finished(&mut self, reason: Option<GiveUpReason>, started: u32) {
        let took = (self.clock)().saturating_duration_since(self.began);
        call_ended(self.function, reason, started, took);
    }
}

/// A call's recording: started by [`begin`](Recording::begin) when the call
/// begins, told of each attempt's start and end and of the call's end.
/// Recording is live only if a recorder was installed
/// ([`record::set_recorder`]) before the call began; otherwise each method
/// is one branch, and no clock is read.
///
/// `Copy`, with no drop glue: a loop or an `async fn`'s future that keeps
/// it tests it where it records, and nowhere else (64 bytes).
#[derive(Debug, Clone, Copy)]
pub struct Recording {
    live: Option<Live>,
}

impl Recording {
    /// Records nothing.
    pub const OFF: Recording = Recording { live: None };

    /// A call of `function` begins: `clock` is read if a recorder is
    /// installed (and times the call's attempts).
    #[inline(always)]
    pub fn begin(function: &'static str, clock: Clock) -> Self {
        if record::on() {
            return Recording {
                live: Live::begin(function, clock),
            };
        }
        // (Written out rather than `Recording::OFF`, which the compiler
        // copies whole from a constant: 8 instructions more per call.)
        Recording { live: None }
    }

    /// Whether a recorder is installed, so that calls that begin now record.
    #[inline(always)]
    pub fn is_on() -> bool {
        record::on()
    }

    /// Whether this call records (the driver then builds the report on
    /// giving up, for its reason).
    #[inline(always)]
    pub fn is_live(&self) -> bool {
        self.live.is_some()
    }

    /// Another attempt is about to run: call it after each retry's sleep
    /// (the first attempt's start is the call's, so the success path never
    /// calls it).
    #[inline(always)]
    pub fn attempt_starts(&mut self) {
        if let Some(live) = &mut self.live {
            live.attempt_starts();
        }
    }

    /// The attempt ended with an accepted `Ok`: the call succeeded.
    #[inline(always)]
    pub fn succeeded(&mut self) {
        if let Some(live) = &mut self.live {
            live.succeeded();
        }
    }

    /// The attempt ended with an error (or, `rejected_ok`, an `Ok` that
    /// `when_ok` rejected) and is retried after `delay`.
    #[inline(always)]
    pub fn retried(&mut self, rejected_ok: bool, delay: Duration) {
        if let Some(live) = &mut self.live {
            live.retrying(outcome(rejected_ok), delay);
        }
    }

    /// The call gave up for `reason`, after an attempt that ended with an
    /// error (or, `Some(true)`, a rejected `Ok`), or with none ended
    /// (`None`: a breaker refused it, or a timeout cancelled the attempt
    /// in flight).
    #[inline(always)]
    pub fn gave_up(&mut self, ended: Option<bool>, reason: GiveUpReason) {
        if let Some(live) = &mut self.live {
            live.gave_up(ended.map(outcome), reason);
        }
    }

    /// The call gave up for `reason` after `attempts` attempts, none of
    /// which this recording saw end: a hedged call past its `timeout`
    /// (the hedged call's own recording counted the attempts that ended).
    #[inline(always)]
    pub fn gave_up_after(&mut self, attempts: u32, reason: GiveUpReason) {
        if let Some(live) = &mut self.live {
            live.gave_up_after(attempts, reason);
        }
    }
}

/// When a call began, for its recording, in the 7 bytes an `async fn`'s
/// future can spare (the attribute's compact loop, whose future a
/// [`Recording`] would grow past the size its caller copies inline): the
/// time in 55 bits of nanoseconds from a process-wide anchor on the call's
/// clock, wrapping (every 417 days: a call's duration is right if it is
/// shorter), and the top bit set; all zero if the call does not record.
/// Each attempt's own start is an [`AttemptBegan`], kept only while the
/// attempt runs.
#[derive(Debug, Clone, Copy)]
pub struct CallBegan {
    ticks: [u8; 7],
}

/// An attempt's start, for the recording (see [`CallBegan`]); not `Copy`,
/// so that an `async fn` moves it into the step after the attempt and its
/// future does not keep it across the sleep.
#[derive(Debug)]
pub struct AttemptBegan {
    /// Nanoseconds from the process's anchor (see [`CallBegan`]), wrapping,
    /// never 0; 0 if the call does not record.
    at: u64,
}

impl CallBegan {
    /// A call begins (its recording begins with its first attempt: see
    /// [`attempt`](CallBegan::attempt), which reads the clock if it
    /// records).
    #[inline(always)]
    pub const fn begin() -> Self {
        CallBegan { ticks: [0; 7] }
    }

    /// An attempt begins: if a recorder is installed, `clock` is read
    /// (and, at the call's first attempt after it was installed, the
    /// call's start is this attempt's).
    #[inline(always)]
    pub fn attempt(&mut self, clock: Clock) -> AttemptBegan {
        if record::on() {
            return self.recorded(clock);
        }
        AttemptBegan { at: 0 }
    }

    /// [`attempt`](CallBegan::attempt), recording.
    #[cold]
    #[inline(never)]
    fn recorded(&mut self, clock: Clock) -> AttemptBegan {
        let now = clock();
        if !self.is_live() {
            self.ticks = ticks(now);
        }
        AttemptBegan {
            at: nanos(now).max(1),
        }
    }

    /// The call of `function` gave up for `reason` after `attempts`
    /// attempts ended, with none ending now (a `timeout` cancelled the
    /// attempt in flight).
    #[inline(always)]
    pub fn gave_up(
        &self,
        function: &'static str,
        clock: Clock,
        attempts: u32,
        reason: GiveUpReason,
    ) {
        if self.is_live() {
            self.resume(function, clock, None, attempts)
                .gave_up(None, reason);
        }
    }

    /// Whether the call records.
    #[inline(always)]
    fn is_live(&self) -> bool {
        self.ticks[6] & 0x80 != 0
    }

    /// The call's recording, resumed with the attempt begun at `at` (or the
    /// call's start) after `attempts` attempts ended.
    #[cold]
    #[inline(never)]
    fn resume(&self, function: &'static str, clock: Clock, at: Option<u64>, attempts: u32) -> Live {
        Live::resume(function, clock, self.ticks, at, attempts)
    }
}

/// The [`Records`] of a compact loop's step: the call's start, the
/// attempt's, the attempts ended before it.
pub(crate) struct CompactRecording<'a> {
    pub(crate) function: &'static str,
    pub(crate) clock: Clock,
    pub(crate) began: &'a CallBegan,
    pub(crate) attempt: AttemptBegan,
    pub(crate) attempts: u32,
}

impl CompactRecording<'_> {
    #[inline(always)]
    fn live(&self, then: impl FnOnce(&mut Live)) {
        if self.attempt.at != 0 {
            let at = Some(self.attempt.at);
            then(
                &mut self
                    .began
                    .resume(self.function, self.clock, at, self.attempts),
            );
        }
    }
}

impl Records for CompactRecording<'_> {
    #[inline(always)]
    fn is_live(&self) -> bool {
        self.attempt.at != 0
    }
    #[inline(always)]
    fn attempt_starts(&mut self) {}
    #[inline(always)]
    fn succeeded(&mut self) {
        self.live(|live| live.succeeded());
    }
    #[inline(always)]
    fn retried(&mut self, rejected_ok: bool, delay: Duration) {
        self.live(|live| live.retrying(outcome(rejected_ok), delay));
    }
    #[inline(always)]
    fn gave_up(&mut self, ended: Option<bool>, reason: GiveUpReason) {
        self.live(|live| live.gave_up(ended.map(outcome), reason));
    }
}

/// What the driver tells of a call's recording: a [`Recording`], or
/// [`NoRecording`] for a loop that never records (every method empty, at
/// no cost).
pub(crate) trait Records {
    /// Whether this call records.
    fn is_live(&self) -> bool;
    /// See [`Recording::attempt_starts`].
    fn attempt_starts(&mut self);
    /// See [`Recording::succeeded`].
    fn succeeded(&mut self);
    /// See [`Recording::retried`].
    fn retried(&mut self, rejected_ok: bool, delay: Duration);
    /// See [`Recording::gave_up`].
    fn gave_up(&mut self, ended: Option<bool>, reason: GiveUpReason);
}

impl Records for Recording {
    #[inline(always)]
    fn is_live(&self) -> bool {
        Recording::is_live(self)
    }
    #[inline(always)]
    fn attempt_starts(&mut self) {
        Recording::attempt_starts(self);
    }
    #[inline(always)]
    fn succeeded(&mut self) {
        Recording::succeeded(self);
    }
    #[inline(always)]
    fn retried(&mut self, rejected_ok: bool, delay: Duration) {
        Recording::retried(self, rejected_ok, delay);
    }
    #[inline(always)]
    fn gave_up(&mut self, ended: Option<bool>, reason: GiveUpReason) {
        Recording::gave_up(self, ended, reason);
    }
}

/// A loop that records nothing (see [`Records`]).
pub(crate) struct NoRecording;

impl Records for NoRecording {
    #[inline(always)]
    fn is_live(&self) -> bool {
        false
    }
    #[inline(always)]
    fn attempt_starts(&mut self) {}
    #[inline(always)]
    fn succeeded(&mut self) {}
    #[inline(always)]
    fn retried(&mut self, _: bool, _: Duration) {}
    #[inline(always)]
    fn gave_up(&mut self, _: Option<bool>, _: GiveUpReason) {}
}

/// The outcome of a failed attempt.
#[inline(always)]
fn outcome(rejected_ok: bool) -> AttemptOutcome {
    if rejected_ok {
        AttemptOutcome::RejectedOk
    } else {
        AttemptOutcome::Error
    }
}

/// The recording of one attempt of a hedged call (see [`Records`]): the
/// attempts overlap, so each ends with its own kind and start.
#[cfg(feature = "tokio")]
pub(crate) struct HedgedRecording<'a> {
    /// The call's recording.
    pub(crate) recording: &'a mut Recording,
    /// The attempt's kind.
    pub(crate) kind: AttemptKind,
    /// When it began (read only while recording).
    pub(crate) began: Option<Instant>,
    /// Attempts the call started so far.
    pub(crate) started: u32,
}

#[cfg(feature = "tokio")]
impl HedgedRecording<'_> {
    /// The attempt ended (`Some(rejected_ok)`: with an error, or an `Ok`
    /// rejected; `None`: an accepted `Ok`).
    #[inline(always)]
    fn ended(&mut self, rejected_ok: Option<bool>) {
        if let (Some(live), Some(began)) = (&mut self.recording.live, self.began) {
            let outcome = match rejected_ok {
                None => AttemptOutcome::Ok,
                Some(r) => outcome(r),
            };
            live.hedged_attempt(self.kind, began, outcome);
        }
    }

    /// The call ends: accepted (`None`) or given up.
    #[inline(always)]
    fn finished(&mut self, reason: Option<GiveUpReason>) {
        if let Some(live) = &mut self.recording.live {
            live.finished(reason, self.started);
        }
    }
}

#[cfg(feature = "tokio")]
impl Records for HedgedRecording<'_> {
    #[inline(always)]
    fn is_live(&self) -> bool {
        self.recording.is_live()
    }
    #[inline(always)]
    fn attempt_starts(&mut self) {}
    #[inline(always)]
    fn succeeded(&mut self) {
        self.ended(None);
        self.finished(None);
    }
    #[inline(always)]
    fn retried(&mut self, rejected_ok: bool, _: Duration) {
        self.ended(Some(rejected_ok));
    }
    #[inline(always)]
    fn gave_up(&mut self, ended: Option<bool>, reason: GiveUpReason) {
        if ended.is_some() {
            self.ended(ended);
        }
        self.finished(Some(reason));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::sync::atomic::{AtomicU32, Ordering};

    static READS: AtomicU32 = AtomicU32::new(0);

    fn counting() -> Instant {
        READS.fetch_add(1, Ordering::Relaxed);
        Instant::now()
    }

    /// Nothing in this crate's unit tests installs a recorder: a call that
    /// records nothing reads no clock, whatever it is told.
    #[test]
    fn a_call_not_recorded_reads_no_clock() {
        assert!(record::recorder().is_none());
        let mut recording = Recording::begin("tests::off", counting);
        assert!(!recording.is_live());
        recording.attempt_starts();
        recording.retried(false, Duration::ZERO);
        recording.succeeded();
        recording.gave_up(Some(true), GiveUpReason::Attempts);
        recording.gave_up(None, GiveUpReason::CircuitOpen);
        recording.gave_up_after(2, GiveUpReason::Timeout);
        let mut began = CallBegan::begin();
        let attempt = began.attempt(counting);
        let mut compact = CompactRecording {
            function: "tests::off",
            clock: counting,
            began: &began,
            attempt,
            attempts: 0,
        };
        assert!(!compact.is_live());
        compact.retried(true, Duration::ZERO);
        compact.succeeded();
        began.gave_up("tests::off", counting, 1, GiveUpReason::Timeout);
        assert_eq!(READS.load(Ordering::Relaxed), 0);
    }

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
