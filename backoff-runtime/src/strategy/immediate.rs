use core::time::Duration;

use super::Strategy;
use crate::jitter::JitterRng;

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
