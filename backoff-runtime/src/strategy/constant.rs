use core::time::Duration;

use super::Strategy;
use crate::jitter::JitterRng;

/// Constant backoff: every retry waits `delay` (at most `max`, if one is set).
///
/// # Default
///
/// No cap: jitter applies around the delay (`scattered(0.25)` draws from
/// 75 % to 125 % of it).
///
/// # Examples
///
/// ```
/// use backoff_runtime::{JitterRng, Strategy, strategy::Constant};
/// use std::time::Duration;
///
/// let s = Constant::new(Duration::from_secs(1));
/// let mut rng = JitterRng::from_seed(0);
/// assert_eq!(s.delay(7, None, &mut rng), Duration::from_secs(1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constant {
    delay: Duration,
    max: Duration,
    /// `min(delay, max)`, computed once.
    capped: Duration,
}

impl Constant {
    /// Waits `delay` before every retry.
    pub const fn new(delay: Duration) -> Self {
        Constant {
            delay,
            max: Duration::MAX,
            capped: delay,
        }
    }

    /// Sets a cap: with a delay above it, every retry waits the cap.
    pub const fn max_delay(mut self, max: Duration) -> Self {
        self.max = max;
        self.capped = if self.delay.as_nanos() > max.as_nanos() {
            max
        } else {
            self.delay
        };
        self
    }
}

impl Strategy for Constant {
    ignores_previous!();
    caps_its_own_delays!();

    #[inline]
    fn delay(&self, _retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
        self.capped
    }

    /// The cap set with [`Constant::max_delay`], or none: a constant delay
    /// has no maximum of its own, so `scattered(r)` jitter may reach
    /// `delay · (1 + r)`.
    #[inline]
    fn max_delay(&self) -> Duration {
        self.max
    }
}

/// No backoff: retry at once.
///
/// Only sensible with a small attempt limit and errors known to be
/// momentary; it gives a struggling service no room to recover.
///
/// # Examples
///
/// ```
/// use backoff_runtime::{JitterRng, Strategy, strategy::Immediate};
/// use std::time::Duration;
///
/// assert_eq!(Immediate.delay(3, None, &mut JitterRng::from_seed(0)), Duration::ZERO);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Immediate;

impl Strategy for Immediate {
    ignores_previous!();
    caps_its_own_delays!();

    #[inline]
    fn delay(&self, _retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
        Duration::ZERO
    }

    #[inline]
    fn max_delay(&self) -> Duration {
        Duration::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::super::schedule;
    use super::*;

    #[test]
    fn is_constant_and_capped() {
        assert_eq!(
            schedule(&Constant::new(Duration::from_secs(1)), 3),
            [1000, 1000, 1000]
        );
        let s = Constant::new(Duration::from_secs(1)).max_delay(Duration::from_millis(10));
        assert_eq!(schedule(&s, 2), [10, 10]);
        // A later, higher cap gives the delay back; equal seconds compare
        // the nanoseconds.
        assert_eq!(schedule(&s.max_delay(Duration::from_secs(5)), 1), [1000]);
        let s = Constant::new(Duration::new(1, 500)).max_delay(Duration::new(1, 499));
        assert_eq!(
            s.delay(1, None, &mut JitterRng::from_seed(0)),
            Duration::new(1, 499)
        );
        let s = Constant::new(Duration::new(1, 499)).max_delay(Duration::new(1, 500));
        assert_eq!(
            s.delay(1, None, &mut JitterRng::from_seed(0)),
            Duration::new(1, 499)
        );
    }
}
