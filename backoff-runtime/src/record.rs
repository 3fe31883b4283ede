//! The recording facade: what every retried call, breaker and budget tells a
//! [`Recorder`], once one is installed.
//!
//! Available with the feature `record` (off by default; the crate
//! `backoff-opentelemetry` turns it on, so a program that depends on it
//! adds nothing: cargo unifies the features). Without the feature there is
//! no facade, and a call pays nothing for it: not even the one atomic load
//! below.
//!
//! This crate records nothing by itself. A recorder (your own, or the
//! `backoff-opentelemetry` crate's, which turns each event into
//! OpenTelemetry metrics and spans) is installed once per process with
//! [`set_recorder`], like a `log` logger; from then on every call of
//! `#[retry]`, [`Policy::retry`](crate::Policy::retry),
//! [`retry_async`](crate::Policy::retry_async),
//! [`retrying`](crate::Policy::retrying), the `tower` policy and hedged
//! calls tells it, one method per event:
//!
//! | event | method | what it carries |
//! |---|---|---|
//! | an attempt ended | [`attempt_ended`](Recorder::attempt_ended) | [`AttemptEnded`]: function, [`CallId`], [`AttemptKind`](crate::AttemptKind), number, [`AttemptOutcome`], start and end |
//! | a call ended | [`call_ended`](Recorder::call_ended) | [`CallEnded`]: function, [`CallId`], [`CallOutcome`] (with the [`GiveUpReason`]), attempts, duration |
//! | a retry was granted | [`retry_delay`](Recorder::retry_delay) | function, the delay before the next attempt |
//! | a named breaker changed state | [`breaker_state`](Recorder::breaker_state) | its name, the new [`CircuitState`](crate::CircuitState) |
//! | a named budget's tokens changed | [`budget_tokens`](Recorder::budget_tokens) | its name, the tokens left |
//!
//! # Cost
//!
//! While no recorder is installed a call pays one atomic load (and a
//! branch) to find that out, and reads no clock. A call that began while
//! one was installed reads the loop's clock when it begins, when each
//! attempt after the first begins, and when each attempt and the call end.
//! A recorder is installed for the rest of the process. A call checks for
//! it when it begins, so a call already running when it is installed
//! records nothing (but for the attribute's compact `async fn` loop, which
//! checks at each attempt and records from its next attempt on, as a call
//! that began then).
//!
//! # Names
//!
//! `function` is what the call is known by: for `#[retry]`,
//! `module_path!()::name`, fixed at compile time; for
//! [`Policy::retry`](crate::Policy::retry), `retry_async`, `retrying` and
//! the `tower` policy, the policy's [`named`](crate::Policy::named) (or
//! `"unnamed"`). Breakers and budgets report their state only when
//! [`named`](crate::CircuitBreaker::named): unnamed ones would share one
//! series.
//!
//! # Example
//!
//! A recorder that counts attempts and calls:
//!
// (Run only with the feature: without it this module is private.)
#![cfg_attr(feature = "record", doc = "```")]
#![cfg_attr(not(feature = "record"), doc = "```ignore")]
//! use backoff_runtime::record::{self, AttemptEnded, AttemptOutcome, CallEnded, Recorder};
//! use backoff_runtime::retry;
//! use std::sync::atomic::{AtomicU32, Ordering};
//!
//! struct Counts {
//!     failed: AtomicU32,
//!     calls: AtomicU32,
//! }
//!
//! impl Recorder for Counts {
//!     fn attempt_ended(&self, attempt: &AttemptEnded) {
//!         if attempt.outcome != AttemptOutcome::Ok {
//!             self.failed.fetch_add(1, Ordering::Relaxed);
//!         }
//!     }
//!     fn call_ended(&self, call: &CallEnded) {
//!         assert!(call.function.ends_with("::flaky")); // module_path!()::flaky
//!         assert_eq!(call.attempts, 3);
//!         self.calls.fetch_add(1, Ordering::Relaxed);
//!     }
//! }
//!
//! static COUNTS: Counts = Counts { failed: AtomicU32::new(0), calls: AtomicU32::new(0) };
//!
//! #[retry(immediate, attempts = 5)]
//! fn flaky(tries: &mut u32) -> Result<u32, &'static str> {
//!     *tries += 1;
//!     if *tries < 3 { Err("busy") } else { Ok(*tries) }
//! }
//!
//! record::set_recorder(&COUNTS).expect("the first recorder");
//! assert_eq!(flaky(&mut 0), Ok(3));
//! assert_eq!(COUNTS.failed.load(Ordering::Relaxed), 2);
//! assert_eq!(COUNTS.calls.load(Ordering::Relaxed), 1);
//! ```
//!
//! # Inside the crate
//!
//! The module is also, with the feature or without it, what the loops
//! (and the attribute's expansion, through `__private`) keep of a call to
//! tell the recorder, and what that costs while none is installed (one
//! atomic load when the call begins, no clock read):
//!
//! - `Recording`: a call's recording, begun with the call (64 bytes,
//!   `Copy`), for every loop but the attribute's compact `async fn` loop;
//! - `CallBegan` and `AttemptBegan`: the compact loop's, 11 bytes for the
//!   call and 8 for the running attempt;
//! - `Records`: what the driver tells of a call, implemented by those and
//!   by the hedged call's per-attempt recording.
//!
//! Without the feature they are zero-sized and every method is empty (no
//! flag is loaded), so the loops are what they were before the facade.
//! With it, a call that records keeps a `Live`: the clock reads and the
//! events told to the recorder.

// (Without the feature every method is empty: its arguments go unused.)
#![cfg_attr(not(feature = "record"), allow(unused_variables))]

use core::time::Duration;
#[cfg(feature = "record")]
use std::sync::atomic::Ordering;

use crate::clock::Clock;
use crate::report::GiveUpReason;

#[cfg(feature = "record")]
mod facade;

#[cfg(feature = "record")]
pub use facade::*;

/// Never built without the feature `record`: no recording is live.
#[cfg(not(feature = "record"))]
type Live = core::convert::Infallible;

/// Never a recorder without the feature `record`: every test of `on`
/// folds away.
#[cfg(not(feature = "record"))]
#[inline(always)]
pub(crate) const fn on() -> bool {
    false
}

/// Never called without the feature `record` (see [`on`]).
#[cfg(not(feature = "record"))]
#[inline(always)]
pub(crate) fn breaker_state(_: &'static str, _: crate::CircuitState) {}

/// Never called without the feature `record` (see [`on`]).
#[cfg(not(feature = "record"))]
#[inline(always)]
pub(crate) fn budget_tokens(_: &'static str, _: f64) {}

/// A call's recording: started by [`begin`](Recording::begin) when the call
/// begins, told of each attempt's start and end and of the call's end
/// (through `Records`). Recording is live only if a recorder was
/// installed (`record::set_recorder`) before the call began; otherwise each
/// method is one branch, and no clock is read. Without the feature `record`
/// it is zero-sized and every method is empty.
///
/// `Copy`, with no drop glue: a loop or an `async fn`'s future that keeps
/// it tests it where it records, and nowhere else (64 bytes with the
/// feature).
#[doc(hidden)]
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
        #[cfg(feature = "record")]
        if on() {
            return Recording {
                live: Live::begin(function, clock),
            };
        }
        // (Written out rather than `Recording::OFF`, which the compiler
        // copies whole from a constant: 8 instructions more per call.)
        Recording { live: None }
    }

    /// Another attempt is about to run: call it after each retry's sleep
    /// (the first attempt's start is the call's, so the success path never
    /// calls it).
    #[inline(always)]
    pub fn attempt_starts(&mut self) {
        #[cfg(feature = "record")]
        self.live(|live| live.attempt_starts());
    }

    /// The call gave up for `reason` after `attempts` attempts, none of
    /// which this recording saw end: a hedged call past its `timeout`
    /// (the hedged call's own recording counted the attempts that ended).
    #[inline(always)]
    pub fn gave_up_after(&mut self, attempts: u32, reason: GiveUpReason) {
        #[cfg(feature = "record")]
        self.live(|live| {
            live.attempts = attempts;
            live.ended(None, Some(reason), None);
        });
    }
}

/// What the driver tells of a call's recording: a [`Recording`], the
/// compact loop's, or a hedged attempt's.
pub(crate) trait Records {
    /// Whether this call records (the driver then builds the report on
    /// giving up, for its reason).
    fn is_live(&self) -> bool;

    /// Runs `then` with the call's live recording, if it records.
    #[cfg(feature = "record")]
    fn live(&mut self, then: impl FnOnce(&mut Live));

    /// The attempt ended with an accepted `Ok`: the call succeeded.
    #[inline(always)]
    fn succeeded(&mut self) {
        #[cfg(feature = "record")]
        self.live(|live| live.ended(Some(AttemptOutcome::Ok), None, None));
    }

    /// The attempt ended with an error (or, `rejected_ok`, an `Ok` that
    /// `when_ok` rejected) and is retried after `delay`.
    #[inline(always)]
    fn retried(&mut self, rejected_ok: bool, delay: Duration) {
        #[cfg(feature = "record")]
        self.live(|live| live.retrying(outcome(rejected_ok), delay));
    }

    /// The call gave up for `reason`, after an attempt that ended with an
    /// error (or, `Some(true)`, a rejected `Ok`), or with none ended
    /// (`None`: a breaker refused it, or a timeout cancelled the attempt
    /// in flight); its last failure of kind `kind` (for a policy with
    /// kinds).
    #[inline(always)]
    fn gave_up(&mut self, ended: Option<bool>, reason: GiveUpReason, kind: Option<&'static str>) {
        #[cfg(feature = "record")]
        self.live(|live| live.ended(ended.map(outcome), Some(reason), kind));
    }
}

/// A borrowed recording records as the one it borrows (a full call's
/// recording, lent to each step).
impl Records for &mut Recording {
    #[inline(always)]
    fn is_live(&self) -> bool {
        (**self).is_live()
    }
    #[cfg(feature = "record")]
    #[inline(always)]
    fn live(&mut self, then: impl FnOnce(&mut Live)) {
        (**self).live(then);
    }
}

impl Records for Recording {
    #[inline(always)]
    fn is_live(&self) -> bool {
        self.live.is_some()
    }
    #[cfg(feature = "record")]
    #[inline(always)]
    fn live(&mut self, then: impl FnOnce(&mut Live)) {
        if let Some(live) = &mut self.live {
            then(live);
        }
    }
}

/// When a call began, for its recording, in 11 bytes (the attribute's
/// compact loop, whose future a [`Recording`] would grow past the size its
/// caller copies inline): the time in 55 bits of nanoseconds from a
/// process-wide anchor on the call's clock, wrapping (every 417 days: a
/// call's duration is right if it is shorter), and the top bit set; and
/// the call's count (its `record::CallId` with the time); all zero (the
/// default, as a call begins) until an attempt records (see
/// [`attempt`](CallBegan::attempt)). Each attempt's own start is an
/// [`AttemptBegan`]. Without the feature `record` it is zero-sized.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CallBegan {
    #[cfg(feature = "record")]
    ticks: [u8; 7],
    /// The call's count (see `record::CallId`), set with `ticks`.
    #[cfg(feature = "record")]
    serial: u32,
}

/// An attempt's start, for the recording (see [`CallBegan`]); not `Copy`:
/// the step after the attempt takes it, leaving the default (none: one
/// already told, or a call that does not record). Without the feature
/// `record` it is zero-sized.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct AttemptBegan {
    /// Nanoseconds from the process's anchor (see [`CallBegan`]), wrapping,
    /// never 0; 0 if the call does not record.
    #[cfg(feature = "record")]
    at: u64,
}

impl CallBegan {
    /// An attempt begins: if a recorder is installed, `clock` is read
    /// (and, at the call's first attempt after it was installed, the
    /// call's start is this attempt's).
    #[inline(always)]
    pub fn attempt(&mut self, clock: Clock) -> AttemptBegan {
        #[cfg(feature = "record")]
        if on() {
            return self.recorded(clock);
        }
        AttemptBegan::default()
    }

    /// [`attempt`](CallBegan::attempt), recording.
    #[cfg(feature = "record")]
    #[cold]
    #[inline(never)]
    fn recorded(&mut self, clock: Clock) -> AttemptBegan {
        let now = clock();
        if self.ticks[6] & 0x80 == 0 {
            // (The flag of a call that records: see `ticks`.)
            self.ticks = ticks(now);
            self.serial = CALLS.fetch_add(1, Ordering::Relaxed);
        }
        AttemptBegan {
            at: nanos(now).max(1),
        }
    }
}

/// The [`Records`] of a compact loop's step: the call's start, the
/// attempt's, the attempts ended before it (read only with the feature
/// `record`).
#[cfg_attr(not(feature = "record"), allow(dead_code))]
pub(crate) struct CompactRecording<'a> {
    pub(crate) function: &'static str,
    pub(crate) clock: Clock,
    pub(crate) began: &'a CallBegan,
    pub(crate) attempt: AttemptBegan,
    pub(crate) attempts: u32,
}

#[cfg(feature = "record")]
impl CallBegan {
    /// The call's recording, resumed with the attempt begun at `at` after
    /// `attempts` attempts ended: the times rebuilt from the clock read
    /// now. (Its parts passed apart, not a `CompactRecording` by
    /// reference: 9 instructions less on the compact loop's success path.)
    #[cold]
    #[inline(never)]
    fn resume(&self, function: &'static str, clock: Clock, at: u64, attempts: u32) -> Live {
        let now = clock();
        let ago = |elapsed: Duration| now.checked_sub(elapsed).unwrap_or(now);
        let began = ago(since(self.ticks, ticks(now)));
        let since_attempt = nanos(now).wrapping_sub(at);
        Live {
            function,
            clock,
            began,
            attempt_began: ago(Duration::from_nanos(since_attempt)),
            attempts,
            serial: self.serial,
        }
    }
}

impl Records for CompactRecording<'_> {
    #[inline(always)]
    fn is_live(&self) -> bool {
        #[cfg(feature = "record")]
        return self.attempt.at != 0;
        #[cfg(not(feature = "record"))]
        false
    }
    /// The call's recording, resumed for this step.
    #[cfg(feature = "record")]
    #[inline(always)]
    fn live(&mut self, then: impl FnOnce(&mut Live)) {
        if self.attempt.at != 0 {
            let (function, clock, at) = (self.function, self.clock, self.attempt.at);
            then(&mut self.began.resume(function, clock, at, self.attempts));
        }
    }
}

/// The recording of one attempt of a hedged call (see [`Records`]): the
/// attempts overlap, so each ends with its own kind and start (read only
/// with the feature `record`).
#[cfg(feature = "tokio")]
#[cfg_attr(not(feature = "record"), allow(dead_code))]
pub(crate) struct HedgedRecording<'a> {
    /// The call's recording.
    pub(crate) recording: &'a mut Recording,
    /// The attempt's kind.
    pub(crate) kind: crate::event::AttemptKind,
    /// Its number in the call, from 1, as its `context` says (not the
    /// order in which the overlapping attempts end).
    pub(crate) number: u32,
    /// When it began (read only while recording).
    pub(crate) began: Option<std::time::Instant>,
    /// Attempts the call started so far.
    pub(crate) started: u32,
    /// The attempts still in flight (dropped if this one ends the call).
    pub(crate) in_flight: &'a InFlight<'a>,
}

/// Calls its argument with each attempt of a hedged call still in flight:
/// its kind, its number and (while recording) its start.
#[cfg(feature = "tokio")]
pub(crate) type InFlight<'a> =
    dyn Fn(&mut dyn FnMut(crate::event::AttemptKind, u32, std::time::Instant)) + 'a;

#[cfg(feature = "tokio")]
impl HedgedRecording<'_> {
    /// The attempt ended (`Some(rejected_ok)`: with an error, or an `Ok`
    /// rejected; `None`: an accepted `Ok`).
    #[inline(always)]
    fn ended(&mut self, rejected_ok: Option<bool>) {
        #[cfg(feature = "record")]
        if let (Some(live), Some(began)) = (&mut self.recording.live, self.began) {
            let outcome = rejected_ok.map_or(AttemptOutcome::Ok, outcome);
            // (The attempts of a hedged call overlap: each keeps its own
            // start and number.)
            live.tell_attempt(self.kind, self.number, outcome, began, (live.clock)());
        }
    }

    /// The call ends: accepted (`None`) or given up.
    #[inline(always)]
    fn finished(&mut self, reason: Option<GiveUpReason>) {
        #[cfg(feature = "record")]
        if let Some(live) = &mut self.recording.live {
            live.finished(reason, self.started, self.in_flight);
        }
    }
}

#[cfg(feature = "tokio")]
impl Records for HedgedRecording<'_> {
    #[inline(always)]
    fn is_live(&self) -> bool {
        self.recording.is_live()
    }
    #[cfg(feature = "record")]
    #[inline(always)]
    fn live(&mut self, then: impl FnOnce(&mut Live)) {
        self.recording.live(then);
    }
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
    fn gave_up(&mut self, ended: Option<bool>, reason: GiveUpReason, _: Option<&'static str>) {
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
    use std::time::Instant;

    static READS: AtomicU32 = AtomicU32::new(0);

    fn counting() -> Instant {
        READS.fetch_add(1, Ordering::Relaxed);
        Instant::now()
    }

    /// Nothing in this crate's unit tests installs a recorder: a call that
    /// records nothing reads no clock, whatever it is told (with the
    /// feature `record` or without it).
    #[test]
    fn a_call_not_recorded_reads_no_clock() {
        #[cfg(feature = "record")]
        assert!(recorder().is_none());
        let mut recording = Recording::begin("tests::off", counting);
        assert!(!recording.is_live());
        recording.attempt_starts();
        recording.retried(false, Duration::ZERO);
        recording.succeeded();
        recording.gave_up(Some(true), GiveUpReason::Attempts, None);
        recording.gave_up(None, GiveUpReason::CircuitOpen, Some("busy"));
        recording.gave_up_after(2, GiveUpReason::Timeout);
        let mut began = CallBegan::default();
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
        compact.gave_up(None, GiveUpReason::Timeout, None);
        assert_eq!(READS.load(Ordering::Relaxed), 0);
    }
}
