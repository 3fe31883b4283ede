//! What to do after a failed attempt, and what `on_retry` is told.

use core::time::Duration;

/// The verdict of a `when` predicate on an error.
///
/// A `when` may also return `bool`: `true` is [`Decision::Retry`], `false`
/// is [`Decision::Stop`].
///
/// # Examples
///
/// ```
/// use backoff_runtime::{Decision, Policy};
/// use std::time::Duration;
///
/// enum HttpError { Status(u16, Option<u64>) }
///
/// fn classify(e: &HttpError) -> Decision {
///     match e {
///         HttpError::Status(429 | 503, Some(secs)) => Decision::RetryAfter(Duration::from_secs(*secs)),
///         HttpError::Status(500..=599, _) => Decision::Retry,
///         HttpError::Status(..) => Decision::Stop,
///     }
/// }
///
/// let policy = Policy::immediate().attempts(3);
/// let mut state = policy.start();
/// let error = HttpError::Status(429, Some(2));
/// assert_eq!(state.next_delay_for(classify(&error)), Some(Duration::from_secs(2)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Decision {
    /// Retry after the policy's next delay.
    Retry,
    /// Retry after exactly this long (a server's `Retry-After`): no jitter,
    /// not capped by the strategy's maximum, but still bound by the attempt
    /// limit and `max_elapsed` (a wait that would cross the deadline gives up
    /// at once).
    RetryAfter(Duration),
    /// Give up now and return this error.
    Stop,
    /// The service is throttling us (a 429, "queue capacity"): retry on the
    /// policy's throttled schedule and limit (`throttled(...)` in the
    /// attribute, [`Policy::throttled`](crate::Policy::throttled)), or like
    /// [`Decision::Retry`] if it has none.
    Throttled,
}

/// What a `when` predicate may return: `bool` or [`Decision`].
///
/// Implement it for your own classification type to return that from
/// `when` directly.
///
/// ```
/// use backoff_runtime::{Decision, IntoDecision};
///
/// assert_eq!(true.into_decision(), Decision::Retry);
/// assert_eq!(false.into_decision(), Decision::Stop);
/// ```
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `when` must return `bool` or `backoff_runtime::Decision`, not `{Self}`",
    label = "this returns `{Self}`",
    note = "return `true` to retry and `false` to stop, or a `Decision` for finer control"
)]
pub trait IntoDecision {
    /// The decision this value stands for.
    fn into_decision(self) -> Decision;
}

impl IntoDecision for bool {
    #[inline]
    fn into_decision(self) -> Decision {
        if self {
            Decision::Retry
        } else {
            Decision::Stop
        }
    }
}

impl IntoDecision for Decision {
    #[inline]
    fn into_decision(self) -> Decision {
        self
    }
}

/// What `on_retry` is told about the retry about to happen.
///
/// # Examples
///
/// ```
/// use backoff_runtime::RetryEvent;
/// use std::time::Duration;
///
/// fn log(e: &std::io::Error, ev: &RetryEvent) {
///     eprintln!("attempt {} failed: {e}; retrying in {:?}", ev.attempt, ev.delay);
/// }
/// log(
///     &std::io::Error::other("boom"),
///     &RetryEvent::new(1, Duration::from_millis(100), Duration::ZERO),
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct RetryEvent {
    /// The attempt that just failed, counting from 1.
    pub attempt: u32,
    /// The sleep about to start.
    pub delay: Duration,
    /// Time since the call began.
    pub elapsed: Duration,
}

impl RetryEvent {
    /// An event, for testing your own `on_retry` hooks.
    pub const fn new(attempt: u32, delay: Duration, elapsed: Duration) -> Self {
        RetryEvent {
            attempt,
            delay,
            elapsed,
        }
    }
}

/// Why a call gave up: the reason in [`GiveUp`], readable after a loop with
/// [`RetryState::give_up`](crate::RetryState::give_up).
///
/// ```
/// use backoff_runtime::{GiveUpReason, Policy};
///
/// let policy = Policy::immediate().attempts(2);
/// let mut state = policy.start();
/// assert!(state.next_delay().is_some());
/// assert!(state.next_delay().is_none());
/// assert_eq!(state.give_up_reason(), Some(GiveUpReason::Attempts));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GiveUpReason {
    /// `when` (or `when_ok`) said stop: it returned `false` or
    /// [`Decision::Stop`].
    Stopped,
    /// The attempt limit was reached.
    Attempts,
    /// The next sleep would end past `max_elapsed`, or a
    /// [`Decision::RetryAfter`] asked for longer than that deadline allows or
    /// than `retry_after_max`.
    Deadline,
    /// The shared [`RetryBudget`](crate::RetryBudget) had no token left.
    Budget,
    /// The [`CircuitBreaker`](crate::CircuitBreaker) refused the call, or
    /// would still be open when the next attempt is due.
    CircuitOpen,
    /// The whole call ran past its `timeout`.
    Timeout,
    /// The [`AdaptiveThrottle`](crate::AdaptiveThrottle) rejected the
    /// attempt locally, before it was sent (the error is
    /// `E::from(Rejected)`).
    Rejected,
}

impl GiveUpReason {
    /// A short lowercase name, as `tracing` events report it: `"stopped"`,
    /// `"attempts"`, `"deadline"`, `"budget"`, `"circuit_open"`, `"timeout"`,
    /// `"rejected"`.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::GiveUpReason::CircuitOpen.as_str(), "circuit_open");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            GiveUpReason::Stopped => "stopped",
            GiveUpReason::Attempts => "attempts",
            GiveUpReason::Deadline => "deadline",
            GiveUpReason::Budget => "budget",
            GiveUpReason::CircuitOpen => "circuit_open",
            GiveUpReason::Timeout => "timeout",
            GiveUpReason::Rejected => "rejected",
        }
    }
}

impl core::fmt::Display for GiveUpReason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `on_giveup` is told when a call ends with an outcome it did not
/// accept: how many calls were made, for how long, and why it stopped.
///
/// ```
/// use backoff_runtime::{GiveUp, GiveUpReason};
/// use std::time::Duration;
///
/// fn report(outcome: &Result<u32, std::io::Error>, g: &GiveUp) {
///     if let Err(e) = outcome {
///         eprintln!("gave up after {} calls ({}): {e}", g.attempts, g.reason);
///     }
/// }
/// report(
///     &Err(std::io::Error::other("down")),
///     &GiveUp::new(3, Duration::from_millis(300), GiveUpReason::Attempts),
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct GiveUp {
    /// Calls made, the failed last one included; 0 when a circuit breaker
    /// refused the first attempt.
    pub attempts: u32,
    /// Time since the call began.
    pub elapsed: Duration,
    /// Why the call stopped.
    pub reason: GiveUpReason,
}

impl GiveUp {
    /// A give-up report, for testing your own `on_giveup` hooks.
    pub const fn new(attempts: u32, elapsed: Duration, reason: GiveUpReason) -> Self {
        GiveUp {
            attempts,
            elapsed,
            reason,
        }
    }
}

/// Which attempt is running: what `context = ctx` binds inside a `#[retry]`
/// body (an idempotency key per attempt, a fallback on the last one).
///
/// ```
/// use backoff_runtime::{AttemptContext, Policy};
///
/// let policy = Policy::immediate().attempts(3);
/// assert_eq!(AttemptContext::of(&policy, 1), AttemptContext::new(1, false));
/// assert!(AttemptContext::of(&policy, 3).last);
/// assert!(!AttemptContext::of(&Policy::immediate().unlimited_attempts(), 9).last);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct AttemptContext {
    /// The attempt, counting from 1.
    pub attempt: u32,
    /// Whether the attempt limit makes this the last attempt (never under
    /// unlimited attempts). With a throttled schedule, the higher of the two
    /// limits counts. A deadline, budget or breaker may still end a call
    /// earlier: `last` speaks of the limit only.
    pub last: bool,
}

impl AttemptContext {
    /// A context, for testing a body that reads one.
    pub const fn new(attempt: u32, last: bool) -> Self {
        AttemptContext { attempt, last }
    }

    /// The context of attempt `attempt` (from 1) under `policy`.
    #[inline]
    pub const fn of<S>(policy: &crate::Policy<S>, attempt: u32) -> Self {
        AttemptContext {
            attempt,
            last: policy.is_last_attempt(attempt),
        }
    }
}
