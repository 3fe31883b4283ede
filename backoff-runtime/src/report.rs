//! How a call that gave up ended: what `on_giveup` is told.

use core::time::Duration;

/// An enum of unit variants (or one-field ones), each with a name that
/// its `as_str` returns: `Variant = "name"`, then the docs of `as_str`.
macro_rules! named {
    ($(#[$a:meta])* pub enum $name:ident {
        $($(#[$v:meta])* $variant:ident$(($field:ty))? = $text:literal,)*
    }
    $(#[$f:meta])* as_str;) => {
        $(#[$a])*
        pub enum $name {
            $($(#[$v])* $variant$(($field))?,)*
        }

        impl $name {
            $(#[$f])*
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant { .. } => $text,)*
                }
            }
        }
    };
}
pub(crate) use named;

named! {
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
    /// assert_eq!(state.give_up().unwrap().reason, GiveUpReason::Attempts);
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[non_exhaustive]
    pub enum GiveUpReason {
        /// `when` (or `when_ok`) said stop: it returned `false` or
        /// [`Decision::Stop`](crate::Decision::Stop).
        Stopped = "stopped",
        /// The attempt limit was reached.
        Attempts = "attempts",
        /// The next sleep would end past `max_elapsed`, or a
        /// [`Decision::RetryAfter`](crate::Decision::RetryAfter) asked for
        /// longer than that deadline allows or than `retry_after_max`.
        Deadline = "deadline",
        /// The shared [`RetryBudget`](crate::RetryBudget) had no token left.
        Budget = "budget",
        /// The [`CircuitBreaker`](crate::CircuitBreaker) refused the call, or
        /// would still be open when the next attempt is due.
        CircuitOpen = "circuit_open",
        /// The whole call ran past its `timeout`.
        Timeout = "timeout",
        /// The [`AdaptiveThrottle`](crate::AdaptiveThrottle) rejected the
        /// attempt locally, before it was sent (the error is
        /// `E::from(Rejected)`).
        Rejected = "rejected",
        /// The call's `cancel` token was cancelled: during a sleep (the call
        /// returns the last attempt's outcome), or before the first attempt
        /// (`E::from(Cancelled)`; see [`Cancelled`](crate::Cancelled)).
        Cancelled = "cancelled",
    }

    /// [`Display`](core::fmt::Display)'s text as a `&'static str` (for the
    /// crate's `tracing` events and `backoff-opentelemetry`'s labels).
    #[doc(hidden)]
    as_str;
}

/// A short lowercase name, as `tracing` events and metrics report it:
/// `"stopped"`, `"attempts"`, `"deadline"`, `"budget"`, `"circuit_open"`,
/// `"timeout"`, `"rejected"`, `"cancelled"`.
///
/// ```
/// assert_eq!(backoff_runtime::GiveUpReason::CircuitOpen.to_string(), "circuit_open");
/// ```
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
    /// Of `attempts`, how many a [hedged call](crate::Hedge) started by its
    /// hedge delay ([`AttemptKind::Hedge`](crate::AttemptKind::Hedge));
    /// zero in every other loop.
    pub hedges: u32,
    /// The kind of the last failure, for a policy with a schedule per kind
    /// ([`Policy::kinds`](crate::Policy::kinds); under `#[retry]`, the text
    /// of the `on(..)` arm's pattern, such as `"Failure::Throttled"`);
    /// `None` otherwise.
    pub failure_kind: Option<&'static str>,
}

impl GiveUp {
    /// A give-up report, for testing your own `on_giveup` hooks.
    pub const fn new(attempts: u32, elapsed: Duration, reason: GiveUpReason) -> Self {
        GiveUp {
            attempts,
            elapsed,
            reason,
            hedges: 0,
            failure_kind: None,
        }
    }
}
