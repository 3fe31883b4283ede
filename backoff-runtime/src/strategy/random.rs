//! The strategies random by themselves, whose `central_delay` is their mean
//! or middle: [`Decorrelated`], [`Sidekiq`] and [`Buckets`].

use core::time::Duration;

use super::Strategy;
use crate::{jitter::JitterRng, nanos};

two_durations! {
    /// AWS "decorrelated jitter": retry `k` waits
    /// `min(max, uniform(base, 3 · previous))`, where `previous` is the delay of
    /// retry `k − 1` and starts at `base`.
    ///
    /// It is random by itself, so a policy built on it defaults to
    /// [`Jitter::None`](crate::Jitter::None).
    ///
    /// Under [`Jitter::Spread`](crate::Jitter::Spread) it spreads around its
    /// mid-range chain: each delay the middle of the range it would be drawn
    /// from if the previous delay had been the middle of its own,
    /// `c(k) = (base + 3 · c(k − 1)) / 2` from `c(0) = base`, that is
    /// `base · (2 · 1.5^k − 1)`, capped at `max` (2, 3.5, 5.75 … times base).
    /// Spread keeps the growth of the chain and drops its randomness, which
    /// spread replaces with the call's phase.
    ///
    /// # Default
    ///
    /// `max` 10 s.
    ///
    /// # Examples
    ///
    /// ```
    /// use backoff_runtime::{JitterRng, Strategy, strategy::Decorrelated};
    /// use std::time::Duration;
    ///
    /// let base = Duration::from_millis(100);
    /// let s = Decorrelated::new(base);
    /// let mut rng = JitterRng::from_seed(1);
    /// let first = s.delay(1, None, &mut rng);
    /// assert!(first >= base && first <= 3 * base);
    /// let second = s.delay(2, Some(first), &mut rng);
    /// assert!(second >= base && second <= 3 * first);
    /// ```
    Decorrelated(base),
    /// Draws between `base` and three times the previous delay, up to 10 s.
}

impl Strategy for Decorrelated {
    caps_its_own_delays!(max);

    fn delay(&self, _retry: u32, previous: Option<Duration>, rng: &mut JitterRng) -> Duration {
        let previous = previous.unwrap_or(self.base);
        let hi = nanos::to_duration(previous.as_nanos().saturating_mul(3));
        let d = rng.uniform(self.base, hi);
        if d > self.max { self.max } else { d }
    }

    /// The mid-range chain, `base · (2 · 1.5^k − 1)`, capped.
    fn central_delay(&self, retry: u32) -> Duration {
        let growth = 2.0 * nanos::powi(1.5, retry.max(1)) - 1.0;
        nanos::mul_f64_capped(self.base, growth, self.max)
    }
}

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
    fn stays_between_base_and_three_times_previous_and_max() {
        let base = Duration::from_millis(5);
        let max = Duration::from_secs(2);
        let s = Decorrelated::new(base).max_delay(max);
        let mut rng = JitterRng::from_seed(8);
        let mut previous = None;
        for k in 1..10_000 {
            let d = s.delay(k, previous, &mut rng);
            let hi = 3 * previous.unwrap_or(base);
            assert!(d >= base.min(max) && d <= hi.min(max), "{k}: {d:?}");
            previous = Some(d);
        }
    }

    #[test]
    fn decorrelated_huge_previous_saturates() {
        let s = Decorrelated::new(Duration::from_secs(1)).max_delay(Duration::MAX);
        let mut rng = JitterRng::from_seed(0);
        let d = s.delay(2, Some(Duration::MAX), &mut rng);
        assert!(d >= Duration::from_secs(1));
    }

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
    fn sidekiq_saturates() {
        let mut rng = JitterRng::from_seed(4);
        let d = Sidekiq::new().delay(u32::MAX, None, &mut rng);
        assert!(d > Duration::from_secs(1 << 40));
        let capped = Sidekiq::new().max_delay(Duration::from_secs(60));
        assert_eq!(
            capped.delay(u32::MAX, None, &mut rng),
            Duration::from_secs(60)
        );
    }

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
    fn buckets_saturates() {
        let mut rng = JitterRng::from_seed(4);
        let s = Buckets::new().max_delay(Duration::MAX);
        assert!(s.delay(u32::MAX, None, &mut rng) > Duration::ZERO);
    }
}
