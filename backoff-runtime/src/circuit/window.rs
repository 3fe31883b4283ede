//! What trips a breaker: consecutive failures, or a rate over a sliding
//! window ([`Trip`], [`Window`]).

use super::*;

/// Buckets of a rate breaker's window.
pub(super) const BUCKETS: u64 = 10;
/// A bucket: | generation: 8 | index mod 2²⁴: 24 | calls: 16 | failures: 16 |
pub(super) const INDEX_MASK: u64 = (1 << 24) - 1;
pub(super) const TALLY_MAX: u64 = 0xFFFF;

/// How a closed breaker decides to open.
#[derive(Debug)]
pub(super) enum Trip {
    /// After this many consecutive failures.
    Consecutive(u64),
    /// On a failure ratio over a sliding window.
    Rate(Window),
}

/// The sliding window of a rate breaker: [`BUCKETS`] buckets of
/// `width` ms, each an `AtomicU64` holding its generation, its index
/// (time / width) and its counts.
#[derive(Debug)]
pub(super) struct Window {
    /// Failures per thousand calls that open the breaker (1..=1000).
    pub(super) per_mille: u64,
    pub(super) min_calls: u64,
    pub(super) width: u64,
    pub(super) buckets: [AtomicU64; BUCKETS as usize],
}

impl Window {
    /// Counts one call (a failure if `failed`) of `generation` at `now`
    /// (ms since the epoch); returns the window's calls and failures, this
    /// one included. A bucket of an earlier time or generation is
    /// recycled; a call whose bucket already holds a later time (another
    /// thread's clock ran ahead) is not counted.
    pub(super) fn record(&self, generation: u64, now: u64, failed: bool) -> (u64, u64) {
        let index = now / self.width;
        let stamp = (generation << 24) | (index & INDEX_MASK);
        let fresh = (stamp << 32) | (1 << 16) | u64::from(failed);
        let bucket = &self.buckets[(index % BUCKETS) as usize];
        let _ = bucket.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
            let held = w >> 32;
            if held == stamp {
                ((w >> 16) & TALLY_MAX < TALLY_MAX).then(|| w + (1 << 16) + u64::from(failed))
            } else if held >> 24 == generation
                && ((held & INDEX_MASK).wrapping_sub(index) & INDEX_MASK) < BUCKETS
            {
                None
            } else {
                Some(fresh)
            }
        });
        self.totals(generation, index)
    }

    /// Calls and failures of `generation` in the `BUCKETS` buckets ending
    /// with `index`.
    pub(super) fn totals(&self, generation: u64, index: u64) -> (u64, u64) {
        let (mut calls, mut failures) = (0, 0);
        for bucket in &self.buckets {
            let w = bucket.load(Ordering::Acquire);
            let held = w >> 32;
            if held >> 24 == generation
                && (index.wrapping_sub(held & INDEX_MASK) & INDEX_MASK) < BUCKETS
            {
                calls += (w >> 16) & TALLY_MAX;
                failures += w & TALLY_MAX;
            }
        }
        (calls, failures)
    }

    /// Whether these counts open the breaker.
    pub(super) fn trips(&self, (calls, failures): (u64, u64)) -> bool {
        calls >= self.min_calls && failures > 0 && failures * 1000 >= self.per_mille * calls
    }
}
