use core::time::Duration;

use super::Strategy;
use crate::{jitter::JitterRng, nanos};

two_durations! {
    /// Linear backoff: retry `k` waits `base · k`, capped at `max`.
    ///
    /// # Default
    ///
    /// `max` 10 s.
    ///
    /// # Examples
    ///
    /// ```
    /// use backoff_runtime::{JitterRng, Strategy, strategy::Linear};
    /// use std::time::Duration;
    ///
    /// let s = Linear::new(Duration::from_millis(100));
    /// let mut rng = JitterRng::from_seed(0);
    /// assert_eq!(s.delay(3, None, &mut rng), Duration::from_millis(300));
    /// ```
    Linear(base),
    /// Grows by `base` each retry, up to 10 s.
}

impl Strategy for Linear {
    ignores_previous!();
    caps_its_own_delays!(max);

    #[inline]
    fn delay(&self, retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
        // u128 nanoseconds: Duration::MAX · u32::MAX still fits.
        let n = self.base.as_nanos() * u128::from(retry.max(1));
        nanos::to_duration(n.min(self.max.as_nanos()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::schedule;
    use super::*;

    #[test]
    fn grows_by_base_and_caps() {
        let s = Linear::new(Duration::from_millis(100));
        assert_eq!(schedule(&s, 7), [100, 200, 300, 400, 500, 600, 700]);
        let s = s.max_delay(Duration::from_millis(250));
        assert_eq!(schedule(&s, 4), [100, 200, 250, 250]);
    }

    #[test]
    fn saturates() {
        let s = Linear::new(Duration::MAX).max_delay(Duration::MAX);
        let mut rng = JitterRng::from_seed(0);
        assert_eq!(s.delay(u32::MAX, None, &mut rng), Duration::MAX);
    }
}
