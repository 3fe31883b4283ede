use core::time::Duration;

use super::Strategy;
use crate::{jitter::JitterRng, nanos};

two_durations! {
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
    Fibonacci(base),
    /// Grows along the Fibonacci sequence from `base`, up to 10 s.
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

    /// In `u128` nanoseconds (past fib(186) or `u128` nanoseconds: far
    /// beyond any cap, ~1.8e28 ns).
    #[inline]
    fn delay(&self, retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
        let (base, max) = (self.base.as_nanos(), self.max.as_nanos());
        match FIB
            .get(retry.max(1) as usize)
            .and_then(|f| base.checked_mul(*f))
        {
            Some(n) => nanos::to_duration(n.min(max)),
            // Past fib(186), a zero base still gives zero.
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
    fn table_matches_the_sequence() {
        assert_eq!(FIB[..8], [0, 1, 1, 2, 3, 5, 8, 13]);
        assert_eq!(FIB[93], 12_200_160_415_121_876_738);
        let mut rng = JitterRng::from_seed(0);
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
