use core::time::Duration;

use super::Strategy;
use crate::{jitter::JitterRng, nanos};

two_durations! {
    /// "Buckets": retry `k` waits uniformly between `n³` and `(n + 2)³` units
    /// (seconds by default), with `n = k − 1`.
    ///
    /// Overlapping buckets spread a fleet's retries evenly over time, at the cost
    /// of widely varying waits. From the essay "Visualization of backoff
    /// functions".
    ///
    /// # Default
    ///
    /// Unit 1 s, no cap.
    ///
    /// # Examples
    ///
    /// ```
    /// use backoff_runtime::{JitterRng, Strategy, strategy::Buckets};
    /// use std::time::Duration;
    ///
    /// let mut rng = JitterRng::from_seed(2);
    /// // n = 1: between 1 s and 27 s.
    /// let d = Buckets::new().delay(2, None, &mut rng);
    /// assert!(d >= Duration::from_secs(1) && d <= Duration::from_secs(27));
    /// ```
    Buckets(unit),
    /// The buckets schedule in seconds, uncapped.
    |n| (nanos::powi(n, 3), nanos::powi(n + 2.0, 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_within_the_bucket() {
        let s = Buckets::new().unit(Duration::from_millis(1));
        let mut rng = JitterRng::from_seed(4);
        for k in 1..100u32 {
            let n = u64::from(k - 1);
            let d = s.delay(k, None, &mut rng);
            assert!(
                d >= Duration::from_millis(n.pow(3)) && d <= Duration::from_millis((n + 2).pow(3))
            );
        }
    }

    /// Draws spread over the whole bucket, not just its floor: at retry 2
    /// (n = 1) they cover most of 1 ..= 27 units.
    #[test]
    fn draws_spread_over_the_bucket() {
        let s = Buckets::new().unit(Duration::from_millis(1));
        let mut rng = JitterRng::from_seed(9);
        let ms: Vec<u128> = (0..400)
            .map(|_| s.delay(2, None, &mut rng).as_millis())
            .collect();
        assert!(ms.iter().any(|&d| d <= 3), "{ms:?}");
        assert!(ms.iter().any(|&d| d >= 25), "{ms:?}");
    }

    #[test]
    fn saturates() {
        let mut rng = JitterRng::from_seed(4);
        let s = Buckets::new().max_delay(Duration::MAX);
        assert!(s.delay(u32::MAX, None, &mut rng) > Duration::ZERO);
    }
}
