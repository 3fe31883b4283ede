//! A call's [`Permit`] and the verdict it reports.

use super::*;

/// Leave to make one call through a [`CircuitBreaker`]; report how it went
/// with [`success`](Permit::success), [`failure`](Permit::failure) or
/// [`release`](Permit::release).
///
/// **Dropped without a verdict, a permit counts as a failure**, at the time
/// its clock reads then: a cancelled call (an `attempt_timeout` or
/// `timeout` that fired, a caller's own `tokio::time::timeout`, a dropped
/// future) or a panic is a failed call.
///
/// ```
/// use backoff_runtime::{CircuitBreaker, CircuitState};
/// use std::time::Duration;
///
/// let breaker = CircuitBreaker::new(2, 1, Duration::from_secs(30));
/// for _ in 0..2 {
///     let permit = breaker.acquire_on(backoff_runtime::clock::system).unwrap();
///     drop(permit); // the call hung and was cancelled
/// }
/// assert_eq!(breaker.state(), CircuitState::Open);
/// ```
#[derive(Debug)]
#[must_use = "report the call's outcome with `success` or `failure` (dropped, it counts as a failure)"]
pub struct Permit<'a> {
    pub(super) breaker: &'a CircuitBreaker,
    /// Times a verdict given by dropping the permit (and a rate breaker's
    /// successes).
    pub(super) clock: Clock,
    pub(super) generation: u8,
    pub(super) trial: bool,
}

impl Permit<'_> {
    /// The call succeeded (or the service answered with an error that says
    /// nothing about its health).
    #[inline]
    pub fn success(self) {
        // (No drop: that would be a failure.)
        let permit = ManuallyDrop::new(self);
        permit.breaker.on_success(&permit);
    }

    /// The call failed at `now`.
    pub fn failure(self, now: Instant) {
        let permit = ManuallyDrop::new(self);
        permit.breaker.on_failure(&permit, now);
    }

    /// The call was not made after all: counts as nothing, and a half-open
    /// trial frees its slot for the next caller.
    ///
    /// ```
    /// use backoff_runtime::{CircuitBreaker, CircuitState};
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(1, 1, Duration::ZERO);
    /// let t = Instant::now();
    /// breaker.acquire(t).unwrap().release();
    /// assert_eq!(breaker.state(), CircuitState::Closed);
    /// ```
    pub fn release(self) {
        let permit = ManuallyDrop::new(self);
        if permit.trial {
            permit.breaker.release(&permit);
        }
    }

    /// Whether this is the half-open trial call.
    #[inline]
    #[doc(hidden)]
    pub fn is_trial(&self) -> bool {
        self.trial
    }
}

/// No verdict: a cancelled or panicked call, a failure now.
impl Drop for Permit<'_> {
    #[cold]
    #[inline(never)]
    fn drop(&mut self) {
        let now = (self.clock)();
        self.breaker.on_failure(self, now);
    }
}
