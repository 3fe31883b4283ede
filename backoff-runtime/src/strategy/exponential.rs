use core::time::Duration;

use super::{DEFAULT_MAX, Strategy};
use crate::jitter::JitterRng;
use crate::nanos::{self, Scale};

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
    /// `base` and `max` converted once, if both fit `u64` nanoseconds (up
    /// to ~584 years): the fast path.
    scale: Option<Scale>,
}

/// The least factor for which the schedule, as computed, never falls back
/// below the cap once it has reached it: `1 + 2⁻¹⁹` (the attribute's
/// factors, and any a user is likely to set, are far above it).
///
/// Why: [`nanos::powi`] computes `factor^n` with rounding errors whose
/// weights add up to at most `n + 32` (a squaring doubles the error it
/// inherits, and the squarings' weights sum to at most `n`), so for
/// `n < 2³²` the computed power is within a factor of about `1 ± 2⁻²¹` of
/// the true one, and the computed `factor^n` over the computed
/// `factor^(n−1)` is at least about `factor · (1 − 2⁻²⁰)`: above 1 for this
/// factor and any larger one. (Near an overflow to infinity the bound says
/// nothing, but there both powers are far past 2¹²⁸, which puts any nonzero
/// base past any cap.) Scaling by the base, comparing with
/// the cap and rounding are all monotonic, so a delay at the cap is followed
/// by delays at the cap, and [`Exponential::capped_delay`] may return the
/// cap without computing anything (a zero base never reaches a nonzero cap;
/// with a zero cap every delay is zero).
const STAYS_CAPPED: f64 = 1.0 + 1.0 / 524_288.0;

impl Exponential {
    /// Starts at `base`, doubling up to 10 s.
    pub const fn new(base: Duration) -> Self {
        Exponential {
            base,
            factor: 2.0,
            max: DEFAULT_MAX,
            scale: None,
        }
        .max_delay(DEFAULT_MAX)
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
        self.scale = match (nanos::of_u64(self.base), nanos::of_u64(max)) {
            (Some(base), Some(cap)) => Some(Scale::new(base, cap)),
            _ => None,
        };
        self
    }
}

impl Strategy for Exponential {
    #[inline]
    fn delay(&self, retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
        // A huge exponent gives an infinite power, which the cap absorbs.
        let power = nanos::powi(self.factor, retry.saturating_sub(1));
        match &self.scale {
            Some(scale) => scale.mul_capped(power, self.max),
            None => nanos::mul_f64_capped(self.base, power, self.max),
        }
    }

    /// [`delay`](Strategy::delay), which caps already; once the previous
    /// retry's delay was the cap, so is this one (see [`STAYS_CAPPED`]), and
    /// the power is not computed again.
    #[inline]
    fn capped_delay(
        &self,
        retry: u32,
        previous: Option<Duration>,
        rng: &mut JitterRng,
    ) -> Duration {
        if self.factor >= STAYS_CAPPED
            && let Some(previous) = previous
            && previous == self.max
        {
            return self.max;
        }
        self.delay(retry, previous, rng)
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
            assert_eq!(Exponential::new(MS(1)).factor(f).factor, 2.0, "{f}");
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

    /// `capped_delay` as the policy calls it (each retry given the previous
    /// one's delay) against `delay` computed afresh.
    fn agrees(s: &Exponential, retries: core::ops::RangeInclusive<u32>) {
        let mut rng = JitterRng::from_seed(0);
        let mut previous =
            (*retries.start() > 1).then(|| s.delay(retries.start() - 1, None, &mut rng));
        for k in retries {
            let fresh = s.delay(k, None, &mut rng);
            let stepped = s.capped_delay(k, previous, &mut rng);
            assert_eq!(stepped, fresh, "{s:?} retry {k}");
            previous = Some(stepped);
        }
    }

    #[test]
    fn the_capped_tail_is_the_computed_one() {
        let ns = Duration::from_nanos;
        let just_above = STAYS_CAPPED;
        let just_below = 1.0 + 1.0 / 1_048_576.0;
        let factors = [
            just_above,
            just_below,
            1.0001,
            1.1,
            1.5,
            2.0,
            3.0,
            10.0,
            1e300,
            f64::MAX,
        ];
        let bases = [
            Duration::ZERO,
            ns(1),
            ns(3),
            MS(100),
            Duration::from_secs(1 << 40),
            Duration::MAX,
        ];
        let caps = [
            Duration::ZERO,
            ns(1),
            MS(600),
            DEFAULT_MAX,
            Duration::from_secs(1 << 36),
            Duration::MAX,
        ];
        for f in factors {
            for base in bases {
                for cap in caps {
                    let s = Exponential::new(base).factor(f).max_delay(cap);
                    agrees(&s, 1..=300);
                    agrees(&s, u32::MAX - 300..=u32::MAX);
                }
            }
        }
        // The slowest growth the shortcut takes reaches a 10 s cap from 1 ns
        // after ~12 M retries.
        agrees(
            &Exponential::new(ns(1)).factor(just_above),
            12_000_000..=12_200_000,
        );
    }

    #[test]
    fn the_computed_power_never_shrinks_from_one_retry_to_the_next() {
        // What `STAYS_CAPPED` rests on, sampled over the whole range of
        // exponents, at the least factor it admits.
        let f = STAYS_CAPPED;
        let mut n: u32 = 1;
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        while n < u32::MAX - 1 {
            for m in n..n.saturating_add(64) {
                assert!(nanos::powi(f, m) >= nanos::powi(f, m - 1), "{m}");
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            n = n.saturating_add(1 + (x % 200_000) as u32);
        }
    }
}
