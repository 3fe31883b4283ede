use core::time::Duration;

use super::{DEFAULT_MAX, Strategy};
use crate::{jitter::JitterRng, nanos};

/// Fibonacci backoff: retry `k` waits `base · fib(k)` with fib = 1, 1, 2, 3,
/// 5, 8 …, capped at `max`.
///
/// # Default
///
/// `max` 10 s.
///
/// # Examples
///
/// ```
/// use backoff_runtime::{JitterRng, Strategy, strategy::Fibonacci};
/// use std::time::Duration;
///
/// let s = Fibonacci::new(Duration::from_millis(100));
/// let mut rng = JitterRng::from_seed(0);
/// let ms: Vec<u128> = (1..=7).map(|k| s.delay(k, None, &mut rng).as_millis()).collect();
/// assert_eq!(ms, [100, 100, 200, 300, 500, 800, 1300]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fibonacci {
    base: Duration,
    max: Duration,
    /// `base` and `max` in nanoseconds, computed once, if both fit a `u64`
    /// (up to ~584 years): the fast path.
    nanos: Option<(u64, u64)>,
}

impl Fibonacci {
    /// Grows along the Fibonacci sequence from `base`, up to 10 s.
    pub const fn new(base: Duration) -> Self {
        Fibonacci {
            base,
            max: DEFAULT_MAX,
            nanos: None,
        }
        .max_delay(DEFAULT_MAX)
    }

    /// Sets the cap on every delay.
    pub const fn max_delay(mut self, max: Duration) -> Self {
        self.max = max;
        self.nanos = match (nanos::of_u64(self.base), nanos::of_u64(max)) {
            (Some(base), Some(max)) => Some((base, max)),
            _ => None,
        };
        self
    }
}

/// fib(k) for k = 0 ..= 186, the last that fits a `u128`.
const FIB: [u128; 187] = {
    let mut table = [0u128; 187];
    table[1] = 1;
    let mut k = 2;
    while k < 187 {
        table[k] = table[k - 1] + table[k - 2];
        k += 1;
    }
    table
};

impl Strategy for Fibonacci {
    ignores_previous!();
    caps_its_own_delays!(max);

    #[inline]
    fn delay(&self, retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
        let k = retry.max(1) as usize;
        if let Some((base, max)) = self.nanos {
            // (fib(93) is the last that fits a `u64`; a narrower read than
            // `u64::try_from`, inlined in every caller.)
            let fib = (k < 94).then(|| FIB[k] as u64);
            return match fib.and_then(|f| base.checked_mul(f)) {
                Some(n) => Duration::from_nanos(n.min(max)),
                // Past fib(93), a zero base still gives zero.
                None if base == 0 => Duration::ZERO,
                // Past fib(93) or u64 nanoseconds: far beyond any u64 cap.
                None => self.max,
            };
        }
        self.delay_wide(k)
    }
}

impl Fibonacci {
    /// The delay in `u128` nanoseconds, for bases or caps beyond ~584 years
    /// (past fib(186) or `u128` nanoseconds: far beyond any cap, ~1.8e28 ns).
    #[cold]
    fn delay_wide(&self, k: usize) -> Duration {
        let (base, max) = (self.base.as_nanos(), self.max.as_nanos());
        match FIB.get(k).and_then(|f| base.checked_mul(*f)) {
            Some(n) => nanos::to_duration(n.min(max)),
            None if base == 0 => Duration::ZERO,
            None => self.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::schedule;
    use super::*;

    #[test]
    fn follows_fibonacci() {
        let s = Fibonacci::new(Duration::from_millis(100));
        assert_eq!(schedule(&s, 7), [100, 100, 200, 300, 500, 800, 1300]);
        let s = s.max_delay(Duration::from_millis(400));
        assert_eq!(schedule(&s, 6), [100, 100, 200, 300, 400, 400]);
    }

    #[test]
    fn table_matches_the_sequence_and_the_wide_path() {
        assert_eq!(FIB[..8], [0, 1, 1, 2, 3, 5, 8, 13]);
        assert_eq!(FIB[93], 12_200_160_415_121_876_738);
        let s = Fibonacci::new(Duration::from_nanos(3)).max_delay(Duration::from_secs(1 << 40));
        let mut rng = JitterRng::from_seed(0);
        for k in 1..200 {
            assert_eq!(s.delay(k, None, &mut rng), s.delay_wide(k as usize), "{k}");
        }
        // Past fib(93), exactly, in `u128` nanoseconds.
        let s = Fibonacci::new(Duration::from_nanos(1)).max_delay(Duration::MAX);
        let fib_100 = Duration::from_nanos_u128(354224848179261915075);
        assert_eq!(s.delay(100, None, &mut rng), fib_100);
    }

    #[test]
    fn saturates_at_any_retry() {
        let mut rng = JitterRng::from_seed(0);
        let s = Fibonacci::new(Duration::from_nanos(1)).max_delay(Duration::MAX);
        assert_eq!(s.delay(u32::MAX, None, &mut rng), Duration::MAX);
        let s = Fibonacci::new(Duration::MAX).max_delay(Duration::MAX);
        assert_eq!(s.delay(3, None, &mut rng), Duration::MAX);
        let s = Fibonacci::new(Duration::ZERO);
        assert_eq!(s.delay(94, None, &mut rng), Duration::ZERO);
        assert_eq!(s.delay(u32::MAX, None, &mut rng), Duration::ZERO);
    }
}
