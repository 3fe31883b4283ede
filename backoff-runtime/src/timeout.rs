//! [`Elapsed`]: the error of an attempt cut short by `attempt_timeout`, or of
//! a call cut short by `timeout`.

/// The error of an attempt that ran longer than `attempt_timeout` (the
/// attempt counts as failed), or of a call that ran longer than `timeout`
/// (the call ends); the attribute turns it into the function's error with
/// `E::from(Elapsed)`.
///
/// # Cancellation and the circuit breaker
///
/// A cancelled attempt is a failed attempt: when `attempt_timeout` or
/// `timeout` fires (also in [`Retrying::timeout`](crate::Retrying::timeout)),
/// and when the caller cancels the call itself (its own
/// `tokio::time::timeout`, a `select!`, a dropped future), the attempt in
/// flight reports a failure to the call's
/// [`CircuitBreaker`](crate::CircuitBreaker), at the time of the
/// cancellation: a dependency that hangs opens the breaker, and a half-open
/// trial that hangs reopens it. A call cancelled while it sleeps between
/// attempts reports nothing more (its last attempt was reported already).
///
/// ```
/// use backoff_runtime::Elapsed;
///
/// #[derive(Debug)]
/// enum Error { TimedOut, Io(std::io::Error) }
///
/// impl From<Elapsed> for Error {
///     fn from(_: Elapsed) -> Self { Error::TimedOut }
/// }
/// assert!(matches!(Error::from(Elapsed), Error::TimedOut));
/// assert_eq!(Elapsed.to_string(), "timed out");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Elapsed;

crate::control_error! {
    /// So `io::Result` functions can use `attempt_timeout` and `timeout`
    /// directly: an error of kind [`TimedOut`](std::io::ErrorKind::TimedOut)
    /// whose source is the [`Elapsed`].
    ///
    /// ```
    /// use backoff_runtime::Elapsed;
    ///
    /// let e = std::io::Error::from(Elapsed);
    /// assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    /// assert!(e.get_ref().unwrap().is::<Elapsed>());
    /// ```
    Elapsed: "timed out", TimedOut
}
