use core::time::Duration;

use super::Strategy;
use crate::{jitter::JitterRng, nanos};

two_durations! {
    /// Sidekiq's retry schedule: retry `k` waits `n⁴ + 15 + rand · 30 · (n + 1)`
    /// units (seconds by default), with `n = k − 1` as Sidekiq counts.
    ///
    /// Random by itself; the polynomial grows fast but far slower than an
    /// exponential, so a fleet's retries spread out without gaps of hours.
    /// From the essay "Visualization of backoff functions".
    ///
    /// # Default
    ///
    /// Unit 1 s, no cap.
    ///
    /// # Examples
    ///
    /// ```
    /// use backoff_runtime::{JitterRng, Strategy, strategy::Sidekiq};
    /// use std::time::Duration;
    ///
    /// let s = Sidekiq::new();
    /// let mut rng = JitterRng::from_seed(2);
    /// // n = 2: 16 + 15 + up to 90 seconds.
    /// let d = s.delay(3, None, &mut rng);
    /// assert!(d >= Duration::from_secs(31) && d <= Duration::from_secs(121));
    /// ```
    Sidekiq(unit),
    /// Sidekiq's schedule in seconds, uncapped.
    |n| {
        let floor = nanos::powi(n, 4) + 15.0;
        (floor, floor + 30.0 * (n + 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_polynomial() {
        let s = Sidekiq::new();
        let mut rng = JitterRng::from_seed(4);
        for k in 1..50u32 {
            let n = f64::from(k - 1);
            let d = s.delay(k, None, &mut rng).as_secs_f64();
            let lo = n.powi(4) + 15.0;
            assert!(
                d >= lo - 1e-6 && d <= lo + 30.0 * (n + 1.0) + 1e-6,
                "{k}: {d}"
            );
        }
    }

    /// The random part spans `30 · (n + 1)` seconds: at retry 5 (n = 4)
    /// draws reach past `30 · n` above the floor, and cover the range.
    #[test]
    fn random_part_grows_with_the_retry() {
        let s = Sidekiq::new();
        let mut rng = JitterRng::from_seed(9);
        let floor = 4f64.powi(4) + 15.0;
        let above: Vec<f64> = (0..400)
            .map(|_| s.delay(5, None, &mut rng).as_secs_f64() - floor)
            .collect();
        let max = above.iter().copied().fold(f64::MIN, f64::max);
        let min = above.iter().copied().fold(f64::MAX, f64::min);
        assert!(max > 30.0 * 4.0 && max <= 30.0 * 5.0 + 1e-6, "{max}");
        assert!(min < 30.0 * 0.1, "{min}");
    }

    #[test]
    fn saturates() {
        let mut rng = JitterRng::from_seed(4);
        let d = Sidekiq::new().delay(u32::MAX, None, &mut rng);
        assert!(d > Duration::from_secs(1 << 40));
        let capped = Sidekiq::new().max_delay(Duration::from_secs(60));
        assert_eq!(
            capped.delay(u32::MAX, None, &mut rng),
            Duration::from_secs(60)
        );
    }
}
