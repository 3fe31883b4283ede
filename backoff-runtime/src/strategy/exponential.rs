use core::time::Duration;

use super::{DEFAULT_MAX, Strategy};
use crate::{jitter::JitterRng, nanos};

/// Exponential backoff: retry `k` waits `base · factor^(k−1)`, capped at `max`.
///
/// # Default
///
/// `factor` 2, `max` 10 s.
///
/// # Examples
///
/// ```
/// use backoff_runtime::{JitterRng, Strategy, strategy::Exponential};
/// use std::time::Duration;
///
/// let s = Exponential::new(Duration::from_millis(100)).max_delay(Duration::from_millis(600));
/// let mut rng = JitterRng::from_seed(0);
/// let ms: Vec<u128> = (1..=6).map(|k| s.delay(k, None, &mut rng).as_millis()).collect();
/// assert_eq!(ms, [100, 200, 400, 600, 600, 600]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exponential {
    base: Duration,
    factor: f64,
    max: Duration,
}

impl Exponential {
    /// Starts at `base`, doubling up to 10 s.
    pub const fn new(base: Duration) -> Self {
        Exponential {
            base,
            factor: 2.0,
            max: DEFAULT_MAX,
        }
    }

    /// Sets the growth factor.
    ///
    /// A factor that is not finite or not above 1 is rejected: the call
    /// leaves the factor unchanged. (The attribute reports such a factor as a
    /// compile error.)
    pub const fn factor(mut self, factor: f64) -> Self {
        if factor.is_finite() && factor > 1.0 {
            self.factor = factor;
        }
        self
    }

    /// Sets the cap on every delay.
    pub const fn max_delay(mut self, max: Duration) -> Self {
        self.max = max;
        self
    }

    /// The first delay.
    pub const fn base(&self) -> Duration {
        self.base
    }

    /// The growth factor.
    pub const fn growth(&self) -> f64 {
        self.factor
    }
}

impl Strategy for Exponential {
    caps_its_own_delays!();

    #[inline]
    fn delay(&self, retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
        // A huge exponent gives an infinite power, which the cap absorbs.
        let power = nanos::powi(self.factor, retry.saturating_sub(1));
        nanos::mul_f64_capped(self.base, power, self.max)
    }

    #[inline]
    fn max_delay(&self) -> Duration {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::super::schedule;
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn doubles_and_caps() {
        let s = Exponential::new(MS(100)).max_delay(MS(600));
        assert_eq!(schedule(&s, 7), [100, 200, 400, 600, 600, 600, 600]);
    }

    #[test]
    fn factor_one_and_a_half() {
        let s = Exponential::new(MS(100)).factor(1.5);
        assert_eq!(schedule(&s, 3), [100, 150, 225]);
    }

    #[test]
    fn invalid_factor_is_ignored() {
        for f in [1.0, 0.5, -2.0, f64::NAN, f64::INFINITY] {
            assert_eq!(Exponential::new(MS(1)).factor(f).growth(), 2.0, "{f}");
        }
    }

    #[test]
    fn last_attempts_saturate_at_max() {
        let s = Exponential::new(Duration::MAX).max_delay(Duration::MAX);
        let mut rng = JitterRng::from_seed(0);
        assert_eq!(s.delay(u32::MAX, None, &mut rng), Duration::MAX);
        let s = Exponential::new(MS(100)).factor(f64::MAX);
        assert_eq!(s.delay(u32::MAX, None, &mut rng), DEFAULT_MAX);
        assert_eq!(s.delay(0, None, &mut rng), MS(100));
    }

    #[test]
    fn zero_base_stays_zero() {
        let s = Exponential::new(Duration::ZERO);
        assert_eq!(schedule(&s, 3), [0, 0, 0]);
    }
}
