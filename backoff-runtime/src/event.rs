//! What a loop tells `on_retry`, `on_success` and the body: the retry
//! about to happen, the call that succeeded, and which attempt is running.

use core::time::Duration;

use crate::report::named;
#[cfg(feature = "std")]
use std::time::Instant;

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
    /// What the next attempt is: [`AttemptKind::Retry`] in every loop but a
    /// [hedged call](crate::Hedge), whose attempts started by the hedge
    /// delay are [`AttemptKind::Hedge`].
    pub kind: AttemptKind,
    /// The kind of the failure that is retried, for a policy with a
    /// schedule per kind ([`Policy::kinds`](crate::Policy::kinds); under
    /// `#[retry]`, the text of the `on(..)` arm's pattern, such as
    /// `"Failure::Throttled"`); `None` otherwise.
    pub failure_kind: Option<&'static str>,
    /// The time left until the call's deadline (the nearer of its
    /// `timeout` and its `max_elapsed`), read when `on_retry` runs, before
    /// the sleep; `None` when the call has no deadline.
    pub remaining: Option<Duration>,
    /// Which run of the schedule the failed attempt belongs to, from 1: an
    /// attempt that ran at least the policy's
    /// [`reset_after`](crate::Policy::reset_after) before it failed starts
    /// run 2, and so on. Always 1 without `reset_after`.
    pub run: u32,
}

impl RetryEvent {
    /// An event, for testing your own `on_retry` hooks (of kind
    /// [`AttemptKind::Retry`]).
    ///
    /// ```
    /// use backoff_runtime::{AttemptKind, RetryEvent};
    /// use std::time::Duration;
    ///
    /// let mut event = RetryEvent::new(1, Duration::from_millis(10), Duration::ZERO);
    /// assert_eq!(event.kind, AttemptKind::Retry);
    /// event.kind = AttemptKind::Hedge; // a hedge's, for a hook that tells them apart
    /// assert_eq!(event.kind, AttemptKind::Hedge);
    /// ```
    pub const fn new(attempt: u32, delay: Duration, elapsed: Duration) -> Self {
        RetryEvent {
            attempt,
            delay,
            elapsed,
            kind: AttemptKind::Retry,
            failure_kind: None,
            remaining: None,
            run: 1,
        }
    }

    /// The same event, in a call under a whole-call `timeout` (which its
    /// loop enforces, counted from the call's start): the time left is
    /// the nearer of the two.
    #[cfg(feature = "std")]
    pub(crate) fn within(mut self, timeout: Duration) -> Self {
        let left = timeout.saturating_sub(self.elapsed);
        self.remaining = Some(self.remaining.map_or(left, |r| r.min(left)));
        self
    }
}

named! {
    /// How an attempt came to be made, as `on_retry` hooks and the metrics'
    /// `attempt.type` tell it.
    ///
    /// ```
    /// use backoff_runtime::AttemptKind;
    ///
    /// assert_eq!(AttemptKind::Hedge.as_str(), "hedge");
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[non_exhaustive]
    pub enum AttemptKind {
        /// The call's first attempt.
        Original = "original",
        /// An attempt made after a failed one (in a hedged call: started at
        /// once when an attempt failed with an error to retry).
        Retry = "retry",
        /// A hedged call's attempt started by the hedge delay, while the
        /// earlier ones were still in flight.
        Hedge = "hedge",
    }

    /// The metrics' name for it: `original`, `retry` or `hedge`.
    as_str;
}

/// Which attempt is running: what `context = ctx` binds inside a `#[retry]`
/// body (an idempotency key per attempt, a fallback on the last one).
///
/// ```
/// use backoff_runtime::{AttemptContext, Policy};
///
/// let policy = Policy::immediate().attempts(3);
/// let mut state = policy.start(); // a loop of your own: see `RetryState`
/// assert_eq!(state.context(), AttemptContext::new(1, false));
/// state.next_delay(); // the first attempt failed
/// state.next_delay(); // the second too
/// assert!(state.context().last);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct AttemptContext {
    /// The attempt, counting from 1.
    pub attempt: u32,
    /// Whether the attempt limit makes this the last attempt (never under
    /// unlimited attempts). With a throttled schedule, the last attempt the
    /// two limits allow together, each counting its own kind's failures
    /// (see [`Policy::is_last_attempt`](crate::Policy::is_last_attempt)). A
    /// deadline, budget or breaker may still end a call earlier: `last`
    /// speaks of the limit only.
    pub last: bool,
    /// What started it: [`Original`](AttemptKind::Original) for attempt 1,
    /// [`Retry`](AttemptKind::Retry) after a failure, and in a hedged call
    /// [`Hedge`](AttemptKind::Hedge) when the hedge delay did.
    pub kind: AttemptKind,
    /// The time left until the call's deadline (the nearer of `timeout`
    /// and `max_elapsed`) when the attempt starts, `None` when the call has
    /// none: what to pass on to the server (gRPC's `grpc-timeout`, an HTTP
    /// client's timeout). The last try that `on_deadline = "last_try"`
    /// grants starts at the deadline, and reads `Some(Duration::ZERO)`.
    pub remaining: Option<Duration>,
    /// The deadline itself, for [`deadline`](AttemptContext::deadline).
    #[cfg(feature = "std")]
    pub(crate) deadline: Option<Instant>,
}

impl AttemptContext {
    /// A context, for testing a body that reads one (its `kind` is
    /// `Original` for attempt 1, else `Retry`).
    pub const fn new(attempt: u32, last: bool) -> Self {
        AttemptContext {
            attempt,
            last,
            kind: if attempt <= 1 {
                AttemptKind::Original
            } else {
                AttemptKind::Retry
            },
            remaining: None,
            #[cfg(feature = "std")]
            deadline: None,
        }
    }

    /// The same context, under the call's `deadline` (if any), read at
    /// `now`: [`remaining`](AttemptContext::remaining) is the time from
    /// `now` to it, zero once it has passed.
    ///
    /// ```
    /// use backoff_runtime::AttemptContext;
    /// use std::time::{Duration, Instant};
    ///
    /// let now = Instant::now();
    /// let ctx = AttemptContext::new(1, false).with_deadline(Some(now + Duration::from_secs(2)), now);
    /// assert_eq!(ctx.remaining, Some(Duration::from_secs(2)));
    /// assert_eq!(ctx.deadline(), Some(now + Duration::from_secs(2)));
    /// assert_eq!(AttemptContext::new(1, false).deadline(), None);
    /// ```
    #[cfg(feature = "std")]
    #[doc(hidden)]
    pub fn with_deadline(mut self, deadline: Option<Instant>, now: Instant) -> Self {
        self.deadline = deadline;
        self.remaining = deadline.map(|d| d.saturating_duration_since(now));
        self
    }

    /// The call's deadline (the nearer of `timeout` and `max_elapsed`),
    /// `None` when it has none: an [`Instant`] to hand on, as
    /// `tonic::Request::set_timeout` or reqwest's `.timeout` take the
    /// [`remaining`](AttemptContext::remaining) time.
    #[cfg(feature = "std")]
    pub const fn deadline(&self) -> Option<Instant> {
        self.deadline
    }
}

/// What `on_success` is told about a call that succeeded: the attempts it
/// took (the one that succeeded included) and the time since it began.
///
/// Given only when the call returns an `Ok` that `when_ok` (if any)
/// accepted; never when it gives up, also not for a `fallback`'s value.
///
/// ```
/// use backoff_runtime::{Policy, SuccessEvent};
///
/// let mut calls = 0;
/// let mut told = None;
/// let result: Result<u32, &str> = Policy::immediate()
///     .attempts(5)
///     .retrying(|| { calls += 1; if calls < 3 { Err("busy") } else { Ok(calls) } })
///     .on_success(|value: &u32, event: &SuccessEvent| told = Some((*value, event.attempts)))
///     .call();
/// assert_eq!(result, Ok(3));
/// assert_eq!(told, Some((3, 3)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SuccessEvent {
    /// The attempts the call made, the successful one included (1: it
    /// succeeded at once).
    pub attempts: u32,
    /// Time since the call began.
    pub elapsed: Duration,
}

impl SuccessEvent {
    /// An event, for testing your own `on_success` hooks.
    ///
    /// ```
    /// use backoff_runtime::SuccessEvent;
    /// use std::time::Duration;
    ///
    /// let event = SuccessEvent::new(2, Duration::from_millis(150));
    /// assert_eq!((event.attempts, event.elapsed), (2, Duration::from_millis(150)));
    /// ```
    pub const fn new(attempts: u32, elapsed: Duration) -> Self {
        SuccessEvent { attempts, elapsed }
    }
}
