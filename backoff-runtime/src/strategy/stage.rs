//! Stages that end: by a count of retries or after a time, and what a
//! call keeps of them ([`Mark`]s).
//!
//! A schedule whose stages end is read by the policy through
//! [`Strategy::staged`] rather than [`Strategy::delay`]: with the time
//! since the call began (read only for a schedule that needs it) and the
//! marks the call keeps, one per stage boundary that a count alone cannot
//! place.

use core::time::Duration;

use super::Strategy;
use crate::jitter::{Centred, Jitter, JitterRng};

/// How a stage ends: after `n` retries, or at the first failure once a
/// time has passed since it began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    Times(u32),
    For(Duration),
}

impl End {
    /// Whether a stage ending so is over at its own retry `retry`, `now`
    /// after it began.
    #[inline]
    pub(crate) fn reached(self, retry: u32, now: Duration) -> bool {
        match self {
            End::Times(n) => retry > n,
            End::For(d) => now >= d,
        }
    }
}

/// The most marks a call keeps: the stage boundaries of a schedule placed
/// by time, one per [`Chain`](super::Chain) that ends by time, or whose
/// stages hold one that does (or a [`Stage`]). Past them a chain switches
/// by count only, and one that ends by time stays in its first stage; the
/// attribute refuses such a schedule.
#[doc(hidden)] // (for the hidden `Strategy::staging`/`staged` only)
pub const MAX_MARKS: usize = 4;

/// Where a call crossed a stage boundary: the retry that began the next
/// stage (0: not yet crossed) and the time since the enclosing schedule
/// began, in whole milliseconds rounded up (so a stage never ends early;
/// up to 49 days). Eight bytes: a call keeps [`MAX_MARKS`] of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[doc(hidden)] // (for the hidden `Strategy::staging`/`staged` only)
pub struct Mark {
    pub(crate) switched: u32,
    at_ms: u32,
}

impl Mark {
    /// The next stage began at `retry`, `now` after the schedule did.
    pub(crate) fn new(retry: u32, now: Duration) -> Mark {
        let ms = now.as_nanos().div_ceil(1_000_000);
        Mark {
            switched: retry.max(1),
            at_ms: u32::try_from(ms).unwrap_or(u32::MAX),
        }
    }

    /// The time since the next stage began, `now` after the schedule did.
    pub(crate) fn since(self, now: Duration) -> Duration {
        now.saturating_sub(Duration::from_millis(u64::from(self.at_ms)))
    }
}

/// Where a staged schedule is read: the time since it began, and its
/// marks.
#[doc(hidden)] // (for the hidden `Strategy::staging`/`staged` only)
pub type At<'a> = (Duration, &'a mut [Mark]);

/// What a schedule asks of the call that follows it (see
/// [`Strategy::staging`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[doc(hidden)] // (for the hidden `Strategy::staging`/`staged` only)
pub struct Staging {
    /// The schedule may end (the call then gives up, reason `Attempts`).
    pub ends: bool,
    /// A part of it may end (a side of a union, which goes on without it).
    pub parts_end: bool,
    /// Its stages read the time since the call began.
    pub timed: bool,
    /// The marks it keeps.
    pub marks: usize,
}

impl Staging {
    /// Whether the policy must read it through [`Strategy::staged`].
    #[inline]
    pub const fn is_staged(self) -> bool {
        self.ends || self.parts_end || self.timed || self.marks > 0
    }

    /// Both `self` and `other`, side by side.
    #[inline]
    pub(crate) const fn and(self, other: Staging) -> Staging {
        Staging {
            ends: self.ends || other.ends,
            parts_end: self.parts_end || other.parts_end,
            timed: self.timed || other.timed,
            marks: self.marks + other.marks,
        }
    }
}

/// What a stage computes at the bottom of a staged schedule: its capped
/// delay from the previous one and the call's generator, or (for
/// [`Jitter::Spread`](crate::Jitter::Spread)) its central delay.
/// (By default, the central delays.)
#[derive(Debug, Default)]
#[doc(hidden)] // (for the hidden `Strategy::staging`/`staged` only)
pub struct Leaf<'a> {
    pub(crate) previous: Option<Duration>,
    pub(crate) rng: Option<&'a mut JitterRng>,
}

impl Leaf<'_> {
    /// `strategy`'s delay (or central delay) of `retry`.
    #[inline]
    pub fn of<T: Strategy + ?Sized>(&mut self, strategy: &T, retry: u32) -> Duration {
        match &mut self.rng {
            Some(rng) => strategy.capped_delay(retry, self.previous, rng),
            None => strategy.central_delay(retry),
        }
    }
}

/// A stage that ends: after `n` retries ([`Stage::times`]) or at the first
/// failure once a time has passed since it began ([`Stage::lasting`]).
///
/// Alone, or as a side of [`Shorter`](super::Shorter) or
/// [`Longer`](super::Longer): [`Shorter`](super::Shorter) continues while
/// either side does (with the other side's delay once one has ended),
/// [`Longer`](super::Longer) ends when either side ends, and a schedule
/// that ends makes the call give up, with
/// [`GiveUpReason::Attempts`](crate::GiveUpReason::Attempts). Its time is
/// counted from the start of the schedule it is part of (the call's, or
/// the [`Chain`](super::Chain) stage's it stands in). Its delays are its
/// strategy's; [`delay`](Strategy::delay), read without a call, never
/// ends, and neither does the schedule of a [`Kind`](crate::Kind)
/// (an `on(..)` arm's or the throttled one, which end with their own
/// attempt limits).
///
/// # Examples
///
/// Quick retries for a second, then backing off, and giving up after ten
/// seconds:
///
/// ```
/// use backoff_runtime::{Jitter, Policy, strategy::{Constant, Exponential, Longer, Shorter, Stage}};
/// use std::time::Duration;
///
/// const S: Duration = Duration::from_secs(1);
/// static POLICY: Policy<Longer<Shorter<Stage<Constant>, Exponential>, Stage<Constant>>> =
///     Policy::from_strategy(Longer::new(
///         Shorter::new(
///             Stage::lasting(Constant::new(Duration::from_millis(100)), S),
///             Exponential::new(S).max_delay(Duration::from_secs(4)),
///         ),
///         Stage::lasting(Constant::new(Duration::ZERO), Duration::from_secs(10)),
///     ))
///     .jitter(Jitter::None)
///     .unlimited_attempts();
/// // With instant failures: 100 ms until a second has passed, then the
/// // exponential's (at its retry 11, capped), from the failures at 1, 5
/// // and 9 s; the one at 13 s is past ten seconds.
/// let ms: Vec<u128> = POLICY.delays().map(|d| d.as_millis()).collect();
/// assert_eq!(ms, [[100; 10].as_slice(), &[4000; 3]].concat());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage<S> {
    strategy: S,
    end: End,
}

impl<S> Stage<S> {
    /// `strategy` for its first `times` retries.
    pub const fn times(strategy: S, times: u32) -> Self {
        Stage {
            strategy,
            end: End::Times(times),
        }
    }

    /// `strategy` until the first failure once `d` has passed since the
    /// stage began.
    pub const fn lasting(strategy: S, d: Duration) -> Self {
        Stage {
            strategy,
            end: End::For(d),
        }
    }
}

/// Calls `$call` on a stage's strategy.
macro_rules! its_strategy {
    ($this:expr, $s:ident => $call:expr) => {{
        let $s = &$this.strategy;
        $call
    }};
}

impl<S: Strategy> Strategy for Stage<S> {
    reads_through!(its_strategy);

    #[inline]
    fn staging(&self) -> Staging {
        let own = Staging {
            ends: true,
            parts_end: true,
            timed: matches!(self.end, End::For(_)),
            marks: 0,
        };
        own.and(self.strategy.staging())
    }

    fn staged(&self, retry: u32, (now, marks): At<'_>, leaf: &mut Leaf<'_>) -> Option<Duration> {
        if self.end.reached(retry, now) {
            return None;
        }
        self.strategy.staged(retry, (now, marks), leaf)
    }
}

/// The jittered delay of `retry` of a staged schedule, `now` after the
/// call began, or `None` once it has ended or the `stop` rule (on the
/// central delay) gives up: the policy's step for a schedule whose
/// [`Strategy::staging`] is staged. [`Jitter::Spread`] reads the schedule
/// as it stands after this retry's step (its boundaries crossed so far).
#[inline(never)]
pub(crate) fn backoff_staged<T: Strategy + ?Sized>(
    strategy: &T,
    (jitter, stop): (Jitter, Option<Duration>),
    retry: u32,
    previous: &mut Option<Duration>,
    rng: &mut JitterRng,
    (now, marks): (Duration, &mut [Mark]),
) -> Option<Duration> {
    let leaf = &mut Leaf {
        previous: *previous,
        rng: Some(rng),
    };
    let raw = strategy.staged(retry, (now, &mut *marks), leaf)?;
    let central = AtStage(strategy, now, marks);
    if let Some(stop) = stop
        && central.central(retry) >= stop
    {
        return None;
    }
    let max = strategy.max_delay();
    if let Jitter::Spread = jitter
        && !max.is_zero()
    {
        return Some(crate::jitter::spread(&central, max, retry, rng.phase()));
    }
    Some(super::jittered(strategy, jitter, raw, previous, rng))
}

/// A staged schedule's central delays as they stand at one step.
struct AtStage<'a, T: ?Sized>(&'a T, Duration, &'a [Mark]);

impl<T: Strategy + ?Sized> Centred for AtStage<'_, T> {
    fn central(&self, retry: u32) -> Duration {
        let AtStage(strategy, now, kept) = *self;
        // (A copy: the look around this retry crosses no boundary for good.)
        let mut marks = [Mark::default(); MAX_MARKS];
        let marks = &mut marks[..kept.len().min(MAX_MARKS)];
        marks.copy_from_slice(&kept[..marks.len()]);
        let d = strategy.staged(retry, (now, marks), &mut Leaf::default());
        d.unwrap_or_else(|| strategy.central_delay(retry))
            .min(strategy.max_delay())
    }
}

impl<S: Strategy> crate::Policy<S> {
    /// The main schedule's step: [`backoff_within`](crate::Policy::backoff_within),
    /// or for a staged schedule [`backoff_staged`], `elapsed()` after the
    /// call began (read only if a stage ends by time), with the call's
    /// `marks`.
    #[inline]
    pub(crate) fn backoff_at(
        &self,
        retry: u32,
        previous: &mut Option<Duration>,
        rng: &mut JitterRng,
        (elapsed, marks): (&dyn Fn() -> Duration, &mut [Mark]),
    ) -> Option<Duration> {
        let staging = self.strategy().staging();
        if !staging.is_staged() {
            return self.backoff_within(retry, previous, rng);
        }
        let now = staging.timed.then(elapsed).unwrap_or_default();
        let rule = (self.jitter_kind(), self.settings().stop_at);
        backoff_staged(self.strategy(), rule, retry, previous, rng, (now, marks))
    }
}
