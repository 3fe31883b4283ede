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
    fn huge_previous_saturates() {
        let s = Decorrelated::new(Duration::from_secs(1)).max_delay(Duration::MAX);
        let mut rng = JitterRng::from_seed(0);
        let d = s.delay(2, Some(Duration::MAX), &mut rng);
        assert!(d >= Duration::from_secs(1));
    }
}
