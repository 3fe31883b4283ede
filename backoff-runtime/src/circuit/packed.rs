//! The breaker's state, packed in one `u64` ([`Packed`]), and its clock
//! arithmetic.

use super::*;

// The packed state:
// | state: 2 | generation: 8 | trial: 1 | count: 14 | time, ms mod 2³⁹: 39 |
pub(super) const TIME_BITS: u32 = 39;
pub(super) const TIME_MASK: u64 = (1 << TIME_BITS) - 1;
/// Half the time ring: a difference of times at or above it is negative.
pub(super) const TIME_HALF: u64 = 1 << (TIME_BITS - 1);
pub(super) const COUNT_SHIFT: u32 = TIME_BITS;
pub(super) const COUNT_BITS: u32 = 14;
pub(super) const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;
pub(super) const TRIAL: u64 = 1 << (COUNT_SHIFT + COUNT_BITS);
pub(super) const GEN_SHIFT: u32 = COUNT_SHIFT + COUNT_BITS + 1;
pub(super) const GEN_MASK: u64 = 0xFF;
pub(super) const STATE_SHIFT: u32 = 62;
pub(super) const CLOSED: u64 = 0;
pub(super) const OPEN: u64 = 1;
pub(super) const HALF_OPEN: u64 = 2;
/// The bits that are zero in a closed breaker with no failure counted,
/// whatever its generation.
pub(super) const CLEAN_MASK: u64 = (3 << STATE_SHIFT) | (COUNT_MAX << COUNT_SHIFT);
/// The count of a closed rate breaker, which counts in its window instead:
/// never clean, so a success takes the path that records it.
pub(super) const RATE_MARK: u64 = 1;
/// An `open_for` that never ends (2³⁸ ms, 8.7 years, or more).
pub(super) const NEVER: u64 = u64::MAX;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Packed {
    pub(super) state: u64,
    /// Bumped by every change of state and every trial claimed: a permit
    /// reports only to the generation that admitted it.
    pub(super) generation: u64,
    pub(super) count: u64,
    pub(super) trial: bool,
    /// Open: when it opened; half-open: when the trial was claimed
    /// (milliseconds since the breaker's epoch, rounded up, mod 2³⁹).
    pub(super) at: u64,
}

impl Packed {
    #[inline]
    pub(super) fn load(word: u64) -> Self {
        Packed {
            state: word >> STATE_SHIFT,
            generation: (word >> GEN_SHIFT) & GEN_MASK,
            count: (word >> COUNT_SHIFT) & COUNT_MAX,
            trial: word & TRIAL != 0,
            at: word & TIME_MASK,
        }
    }

    #[inline]
    pub(super) fn store(self) -> u64 {
        (self.state << STATE_SHIFT)
            | ((self.generation & GEN_MASK) << GEN_SHIFT)
            | (self.count.min(COUNT_MAX) << COUNT_SHIFT)
            | if self.trial { TRIAL } else { 0 }
            | (self.at & TIME_MASK)
    }

    /// `state` entered at `at` with `count`, in a new generation: opened
    /// (count 0), half-open with a trial claimed, or closed afresh (at 0,
    /// the count 0 or a rate breaker's mark).
    pub(super) fn entered(self, state: u64, count: u64, at: u64) -> Self {
        Packed {
            state,
            generation: (self.generation + 1) & GEN_MASK,
            count,
            trial: state == HALF_OPEN,
            at,
        }
    }
}

/// `now - then` on the 2³⁹ ms ring: zero if `then` is later (a clock read
/// before another thread's), correct up to 2³⁸ ms (8.7 years).
#[inline]
pub(super) fn since(now: u64, then: u64) -> u64 {
    let d = now.wrapping_sub(then) & TIME_MASK;
    if d >= TIME_HALF { 0 } else { d }
}

/// Milliseconds in `d`, rounded up; [`NEVER`] from 2³⁸ ms.
pub(super) const fn millis_up(d: Duration) -> u64 {
    let ms = d.as_nanos().div_ceil(1_000_000);
    if ms >= TIME_HALF as u128 {
        NEVER
    } else {
        ms as u64
    }
}

/// The first instant a breaker or throttle saw: each keeps time in
/// milliseconds from there (each its own, so controls on different clocks,
/// such as tokio's paused one, do not disturb each other).
#[derive(Debug)]
pub(crate) struct Epoch(OnceLock<Instant>);

impl Epoch {
    pub(crate) const fn new() -> Self {
        Epoch(OnceLock::new())
    }

    /// Milliseconds since the epoch, rounded down and up (an earlier
    /// instant, from another clock, counts as the epoch), not yet reduced
    /// to the ring.
    pub(crate) fn millis(&self, now: Instant) -> (u64, u64) {
        let nanos = now
            .saturating_duration_since(*self.0.get_or_init(|| now))
            .as_nanos();
        let floor = u64::try_from(nanos / 1_000_000).unwrap_or(u64::MAX);
        let ceil = u64::try_from(nanos.div_ceil(1_000_000)).unwrap_or(u64::MAX);
        (floor, ceil)
    }
}
