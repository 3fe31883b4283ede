//! What trips a breaker: consecutive failures, or a rate over a sliding
//! window ([`Trip`], [`Window`]); the window's [`Buckets`], which an
//! [`AdaptiveThrottle`](crate::AdaptiveThrottle) counts in too.

use super::*;

/// Buckets of a sliding window.
pub(crate) const BUCKETS: u64 = 10;
/// A bucket's time index is kept mod 2²⁴.
const INDEX_MASK: u64 = (1 << 24) - 1;

/// How a closed breaker decides to open.
#[derive(Debug)]
pub(super) enum Trip {
    /// After this many consecutive failures.
    Consecutive(u64),
    /// On a failure ratio over a sliding window.
    Rate(Window),
}

/// The sliding window of a rate breaker: its calls (the high counts) and
/// failures (the low ones), 16 bits each.
#[derive(Debug)]
pub(super) struct Window {
    /// Failures per thousand calls that open the breaker (1..=1000).
    pub(super) per_mille: u64,
    pub(super) min_calls: u64,
    pub(super) buckets: Buckets<16>,
}

impl Window {
    /// Counts one call (a failure if `failed`) of `generation` at `now`
    /// (ms since the epoch); whether the window's calls and failures, this
    /// one included, open the breaker.
    pub(super) fn trips(&self, generation: u64, now: u64, failed: bool) -> bool {
        let index = now / self.buckets.width;
        self.buckets
            .add(generation, index, (1 << 16) | u64::from(failed), true);
        let (calls, failures) = self.buckets.totals(generation, index);
        calls >= self.min_calls && failures > 0 && failures * 1000 >= self.per_mille * calls
    }
}

/// [`BUCKETS`] buckets of `width` ms, each an `AtomicU64`:
/// | generation: 40 − 2·BITS | time index mod 2²⁴: 24 | high: BITS | low: BITS |.
/// A low count never exceeds its bucket's high one unless both are added
/// at once.
#[derive(Debug)]
pub(crate) struct Buckets<const BITS: u32> {
    /// A tenth of the window, in ms (at least 1).
    pub(crate) width: u64,
    buckets: [AtomicU64; BUCKETS as usize],
}

impl<const BITS: u32> Buckets<BITS> {
    const MAX: u64 = (1 << BITS) - 1;

    /// Empty buckets of a tenth of `window` each (at least 1 ms, saturating).
    pub(crate) const fn new(window: Duration) -> Self {
        let width = window.as_millis().div_ceil(BUCKETS as u128);
        Buckets {
            width: if width == 0 {
                1
            } else if width > u64::MAX as u128 {
                u64::MAX
            } else {
                width as u64
            },
            buckets: [const { AtomicU64::new(0) }; BUCKETS as usize],
        }
    }

    /// Adds `add` (to the high count, or to the low one only if it stays
    /// at most the high one) in the bucket of `index` and `generation`;
    /// with `fresh`, a bucket of an earlier index or another generation is
    /// recycled (a bucket already holding a later index, that a thread whose
    /// clock ran ahead took, is not). Whether it counted.
    pub(crate) fn add(&self, generation: u64, index: u64, add: u64, fresh: bool) -> bool {
        let stamp = (generation << 24) | (index & INDEX_MASK);
        let bucket = &self.buckets[(index % BUCKETS) as usize];
        let update = bucket.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
            let held = w >> (2 * BITS);
            let (high, low) = ((w >> BITS) & Self::MAX, w & Self::MAX);
            if held == stamp {
                let full = if add >> BITS == 0 {
                    low >= high
                } else {
                    high >= Self::MAX
                };
                (!full).then_some(w + add)
            } else if !fresh
                || (held >> 24 == generation
                    && ((held & INDEX_MASK).wrapping_sub(index) & INDEX_MASK) < BUCKETS)
            {
                None
            } else {
                Some((stamp << (2 * BITS)) | add)
            }
        });
        update.is_ok()
    }

    /// The high and low counts of `generation` in the buckets of the window
    /// ending with `index`.
    pub(crate) fn totals(&self, generation: u64, index: u64) -> (u64, u64) {
        let (mut high, mut low) = (0, 0);
        for bucket in &self.buckets {
            let w = bucket.load(Ordering::Acquire);
            let held = w >> (2 * BITS);
            if held >> 24 == generation
                && (index.wrapping_sub(held & INDEX_MASK) & INDEX_MASK) < BUCKETS
            {
                high += (w >> BITS) & Self::MAX;
                low += w & Self::MAX;
            }
        }
        (high, low)
    }
}
