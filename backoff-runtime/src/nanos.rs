//! Saturating conversions between [`Duration`] and whole nanoseconds.
//!
//! Every delay computation goes through `u128` nanoseconds (which hold
//! [`Duration::MAX`] with room to spare) or through `f64` with an explicit cap,
//! so no strategy can overflow or panic, whatever the attempt count.

use core::time::Duration;

/// The whole nanoseconds in `d` if they fit a `u64` (up to ~584 years): the
/// fast path, avoiding 128-bit arithmetic.
#[inline]
pub(crate) const fn of_u64(d: Duration) -> Option<u64> {
    match d.as_secs().checked_mul(1_000_000_000) {
        Some(n) => n.checked_add(d.subsec_nanos() as u64),
        None => None,
    }
}

/// The duration of `n` nanoseconds, saturating at [`Duration::MAX`].
#[inline]
pub(crate) const fn to_duration(n: u128) -> Duration {
    if n <= u64::MAX as u128 {
        return Duration::from_nanos(n as u64);
    }
    let max = Duration::MAX.as_nanos();
    Duration::from_nanos_u128(if n < max { n } else { max })
}

/// `base · x`, rounded to the nanosecond and capped at `cap`.
///
/// A product that is not finite, or at least `cap`, gives `cap`; a negative or
/// NaN product gives zero. Used by the strategies whose growth is a real number.
#[inline]
pub(crate) fn mul_f64_capped(base: Duration, x: f64, cap: Duration) -> Duration {
    if let (Some(base), Some(cap_nanos)) = (of_u64(base), of_u64(cap)) {
        return Scale::new(base, cap_nanos).mul_capped(x, cap);
    }
    mul_f64_capped_wide(base, x, cap)
}

/// A base and a cap that fit `u64` nanoseconds, converted once for
/// [`mul_f64_capped`]'s fast path: a strategy that scales the same base
/// for every retry keeps one instead of converting again each time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scale {
    /// The base's nanoseconds, as `f64` (rounded as `as` rounds).
    base: f64,
    /// The cap's nanoseconds.
    cap_nanos: u64,
    /// `cap_nanos as f64`.
    cap_f: f64,
}

impl Scale {
    /// `base` and `cap_nanos` nanoseconds.
    #[inline]
    pub(crate) const fn new(base: u64, cap_nanos: u64) -> Self {
        Scale {
            base: base as f64,
            cap_nanos,
            cap_f: cap_nanos as f64,
        }
    }

    /// `base · x` capped at `cap` (the duration of `cap_nanos`), exactly as
    /// [`mul_f64_capped`] computes it.
    #[inline]
    pub(crate) fn mul_capped(&self, x: f64, cap: Duration) -> Duration {
        let product = self.base * x;
        if product.is_nan() || product <= 0.0 {
            return Duration::ZERO;
        }
        if product >= self.cap_f {
            return cap; // infinity included
        }
        // Round half up; `as` from f64 to u64 saturates, and product < cap.
        Duration::from_nanos(((product + 0.5) as u64).min(self.cap_nanos))
    }
}

/// [`mul_f64_capped`] for durations beyond `u64` nanoseconds.
#[cold]
fn mul_f64_capped_wide(base: Duration, x: f64, cap: Duration) -> Duration {
    let product = base.as_nanos() as f64 * x;
    let cap_nanos = cap.as_nanos();
    if product.is_nan() || product <= 0.0 {
        return Duration::ZERO;
    }
    if product >= cap_nanos as f64 {
        return cap;
    }
    to_duration(((product + 0.5) as u128).min(cap_nanos))
}

/// `x^n` by squaring, in `core` (no libm): at most 64 multiplications, and
/// exact wherever the true power is representable (1.5² = 2.25).
#[inline]
pub(crate) fn powi(x: f64, n: u32) -> f64 {
    let (mut base, mut n, mut acc) = (x, n, 1.0);
    while n > 0 {
        if n & 1 == 1 {
            acc *= base;
        }
        n >>= 1;
        if n > 0 {
            base *= base;
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_duration_max() {
        assert_eq!(to_duration(Duration::MAX.as_nanos()), Duration::MAX);
        assert_eq!(to_duration(u128::MAX), Duration::MAX);
        let past_u64 = Duration::from_nanos(u64::MAX) + Duration::from_nanos(1);
        assert_eq!(to_duration(u128::from(u64::MAX) + 1), past_u64);
    }

    #[test]
    fn powi_matches_std() {
        assert_eq!(powi(1.5, 2), 2.25);
        assert_eq!(powi(2.0, 10), 1024.0);
        assert_eq!(powi(3.0, 0), 1.0);
        assert_eq!(powi(2.0, u32::MAX), f64::INFINITY);
        for n in 0..40 {
            let (a, b) = (powi(1.3, n), 1.3f64.powi(n as i32));
            assert!((a - b).abs() <= b * 1e-12, "{n}");
        }
    }

    #[test]
    fn mul_caps_and_handles_non_finite() {
        let ms = Duration::from_millis;
        assert_eq!(mul_f64_capped(ms(100), 2.25, ms(600)), ms(225));
        assert_eq!(mul_f64_capped(ms(100), 7.0, ms(600)), ms(600));
        assert_eq!(mul_f64_capped(ms(100), f64::INFINITY, ms(600)), ms(600));
        assert_eq!(mul_f64_capped(ms(100), f64::NAN, ms(600)), Duration::ZERO);
        assert_eq!(mul_f64_capped(ms(100), -1.0, ms(600)), Duration::ZERO);
        assert_eq!(
            mul_f64_capped(Duration::MAX, 1e300, Duration::MAX),
            Duration::MAX
        );
    }
}
