//! What to do after a failed attempt: [`Decision`], the verdict of `when`.

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
    /// [`Decision::Retry`] if it has none. The throttled schedule is a kind
    /// of its own, as a [`Decision::Kind`]'s: throttled failures count
    /// against its limit alone, not the policy's, and are reported under
    /// its name, `"throttled"`.
    Throttled,
    /// A failure of the policy's kind number `i` (an index into
    /// [`Policy::kinds`](crate::Policy::kinds)): retry on that kind's own
    /// schedule and attempt limit, or give up (reason
    /// [`Stopped`](crate::GiveUpReason::Stopped)) if the kind has none
    /// ([`Kind::named`](crate::Kind::named)). What
    /// `#[retry(on(..))]` makes of `when`'s value.
    ///
    /// ```
    /// use backoff_runtime::{Decision, Policy, Kind};
    /// use std::time::Duration;
    ///
    /// static KINDS: [Kind; 1] = [Kind::new("busy", Policy::constant(Duration::from_millis(5)).attempts(2))];
    /// static POLICY: Policy = Policy::immediate().unlimited_attempts().kinds(&KINDS);
    /// let mut state = POLICY.start();
    /// assert!(state.next_delay_for(Decision::Kind(0)).is_some());
    /// assert!(state.next_delay_for(Decision::Kind(0)).is_none()); // two failures of `busy`
    /// ```
    Kind(u8),
    /// A failure of the policy's kind number `i` whose retry waits exactly
    /// this long: [`Decision::RetryAfter`] (no jitter, bounded by
    /// `retry_after_max`), reported under the kind's name.
    /// `#[retry(on(PATTERN, after = EXPR))]`.
    ///
    /// ```
    /// use backoff_runtime::{Decision, Policy, Kind};
    /// use std::time::Duration;
    ///
    /// static KINDS: [Kind; 1] = [Kind::named("retry_after")];
    /// static POLICY: Policy = Policy::immediate().unlimited_attempts().kinds(&KINDS);
    /// let mut state = POLICY.start();
    /// let d = Duration::from_secs(1);
    /// assert_eq!(state.next_delay_for(Decision::KindAfter(0, d)), Some(d));
    /// ```
    KindAfter(u8, Duration),
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
    note = "return `true` to retry and `false` to stop, or a `Decision` for finer control; to return your own classification type, give it `on(PATTERN, ..)` arms"
)]
pub trait IntoDecision {
    /// The decision this value stands for.
    fn into_decision(self) -> Decision;
}

#[diagnostic::do_not_recommend]
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

#[diagnostic::do_not_recommend]
impl IntoDecision for Decision {
    #[inline]
    fn into_decision(self) -> Decision {
        self
    }
}
