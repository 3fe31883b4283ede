use core::fmt;

use crate::{Cancelled, CircuitOpen, Decision, Elapsed, IntoDecision, Rejected};

/// A function's error when it is another crate's error type `E`, or a
/// refusal of `#[retry]`'s `circuit`, `throttle`, `timeout` and `attempt_timeout`.
///
/// Those arguments fail a call with `E::from(CircuitOpen)`,
/// `E::from(Elapsed)` or `E::from(Rejected)`, and your crate cannot give
/// another crate's error type
/// those `From` impls (the orphan rule). Return
/// `Result<T, backoff_runtime::Error<ThatError>>` instead: `?` on the
/// client's errors still works, and the refusals get variants of their own.
///
/// ```
/// use backoff_runtime::{CircuitBreaker, Error, retry};
/// use std::time::Duration;
/// # mod redis {
/// #     #[derive(Debug)] pub struct RedisError;
/// #     impl std::fmt::Display for RedisError {
/// #         fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str("redis") }
/// #     }
/// #     impl std::error::Error for RedisError {}
/// #     impl From<std::io::Error> for RedisError { fn from(_: std::io::Error) -> Self { RedisError } }
/// #     pub async fn get(key: &str) -> Result<String, RedisError> { Ok(format!("value of {key}")) }
/// # }
///
/// static REDIS: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(10));
///
/// // No error enum of your own: `?` wraps a `redis::RedisError` in
/// // `Error::Inner`, an open breaker is `Error::CircuitOpen`, and a call past
/// // its second is `Error::Elapsed`.
/// #[retry(attempts = 3, circuit = REDIS, timeout = "1s")]
/// async fn cached(key: &str) -> Result<String, Error<redis::RedisError>> {
///     let value = redis::get(key).await?;
///     Ok(value)
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// match cached("user:1").await {
///     Ok(value) => assert_eq!(value, "value of user:1"),
///     Err(Error::Inner(e)) => eprintln!("redis failed: {e}"),
///     Err(Error::CircuitOpen(_)) => eprintln!("redis is down, not calling it"),
///     Err(Error::Elapsed) => eprintln!("redis took more than a second"),
///     Err(e) => eprintln!("{e}"), // refusals added later (the enum is non-exhaustive)
/// }
/// # }
/// ```
///
/// - `?` on an `E` gives [`Error::Inner`] (for the `E`s that implement
///   [`ForeignError`], which says why the bound is there).
/// - `circuit` refuses a call with [`Error::CircuitOpen`]
///   (`From<CircuitOpen>`).
/// - `timeout` and `attempt_timeout` cut a call or attempt short with
///   [`Error::Elapsed`] (`From<Elapsed>`).
/// - `throttle` rejects an attempt locally with [`Error::Rejected`]
///   (`From<Rejected>`).
/// - `cancel` fails a call cancelled before its first attempt with
///   [`Error::Cancelled`] (`From<Cancelled>`).
///
/// The enum is `#[non_exhaustive]`: a later version may add a variant for a
/// new refusal, so a `match` needs a wildcard arm.
///
/// [`Display`](fmt::Display) and [`source`](std::error::Error::source) are
/// transparent for `Inner`: they are the inner error's own, so a chain of
/// causes shows the inner error once. A refusal displays as
/// [`CircuitOpen`] and [`Elapsed`] do, and has no source. `Error<E>` is a
/// [`std::error::Error`] when `E` is one (so it boxes into a
/// `Box<dyn Error + Send + Sync>` and an `anyhow::Error`), and
/// [`Display`](fmt::Display) when `E` is.
///
/// ```
/// use backoff_runtime::{CircuitOpen, Elapsed, Error};
/// use std::error::Error as _;
/// use std::io;
///
/// fn read() -> Result<String, Error<io::Error>> {
///     let text = std::fs::read_to_string("/no/such/file")?; // an `io::Error`
///     Ok(text)
/// }
/// let e = read().unwrap_err();
/// assert!(matches!(e, Error::Inner(inner) if inner.kind() == io::ErrorKind::NotFound));
///
/// let refused: Error<io::Error> = CircuitOpen::default().into();
/// assert!(matches!(refused, Error::CircuitOpen(_)));
/// assert_eq!(refused.to_string(), "circuit breaker is open");
/// assert!(refused.source().is_none());
///
/// let late = Error::<io::Error>::from(Elapsed);
/// assert_eq!(late.to_string(), "timed out");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error<E> {
    /// The call's own error.
    Inner(E),
    /// A [`CircuitBreaker`](crate::CircuitBreaker) refused the call: it did
    /// not run. The refusal says when the breaker lets a trial through
    /// ([`CircuitOpen::retry_in`]), for a `Retry-After`.
    CircuitOpen(CircuitOpen),
    /// The call ran past its `timeout`, or an attempt past its
    /// `attempt_timeout`, and was cancelled.
    Elapsed,
    /// An [`AdaptiveThrottle`](crate::AdaptiveThrottle) rejected the
    /// attempt locally: it was not sent.
    Rejected,
    /// The call's `cancel` token was cancelled before its first attempt:
    /// it did not run (see [`Cancelled`]).
    Cancelled,
}

impl<E> Error<E> {
    /// A `when` for `Error<E>` made of one for `E`: the inner error is
    /// classified by `when`, an attempt cut short by `attempt_timeout`
    /// ([`Error::Elapsed`]) is retried, and any other refusal stops.
    ///
    /// `#[retry]` never asks `when` about a refusal that ends the call (an
    /// open breaker, the whole call's `timeout`); an `attempt_timeout` is a
    /// failed attempt like any other, and is asked about.
    ///
    /// ```
    /// use backoff_runtime::{Decision, Elapsed, Error, retry};
    /// use std::io;
    ///
    /// fn transient(e: &io::Error) -> bool {
    ///     e.kind() == io::ErrorKind::ConnectionReset
    /// }
    ///
    /// #[retry(immediate, attempts = 3, attempt_timeout = "1s", when = |e| e.decision(transient))]
    /// async fn call() -> Result<u32, Error<io::Error>> {
    ///     Ok(1)
    /// }
    ///
    /// let reset = Error::Inner(io::Error::from(io::ErrorKind::ConnectionReset));
    /// assert_eq!(reset.decision(transient), Decision::Retry);
    /// let denied = Error::Inner(io::Error::from(io::ErrorKind::PermissionDenied));
    /// assert_eq!(denied.decision(transient), Decision::Stop);
    /// assert_eq!(Error::<io::Error>::from(Elapsed).decision(transient), Decision::Retry);
    /// # assert_eq!(tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(call()).unwrap(), 1);
    /// ```
    pub fn decision<D: IntoDecision>(&self, when: impl FnOnce(&E) -> D) -> Decision {
        match self {
            Error::Inner(e) => when(e).into_decision(),
            Error::Elapsed => Decision::Retry,
            Error::CircuitOpen(_) | Error::Rejected | Error::Cancelled => Decision::Stop,
        }
    }
}

/// The error types that `?` converts into an [`Error`]: every `E` with
/// `From<std::io::Error>` (the errors of I/O clients), and types of your
/// own crate that implement this trait.
///
/// `?` converts an error `E` into `Error<E>` when `E` implements
/// [`ForeignError`], which every type that a [`std::io::Error`] converts
/// into does (`E: From<std::io::Error>`): the errors of I/O clients, such as
/// `redis::RedisError`, `tonic::Status`, `sqlx::Error`, `std::io::Error`
/// itself, and `Box<dyn std::error::Error + Send + Sync>`. For any other
/// error type, wrap it by hand: `.map_err(Error::Inner)?`.
///
/// The bound is what lets `?` and the refusals coexist. `?` needs an impl
/// `From<E> for Error<E>`, and `circuit` needs `From<CircuitOpen> for
/// Error<E>` for every `E`. Left unbounded, the first would also cover
/// `E = CircuitOpen`, where the two impls disagree (is `CircuitOpen` the
/// inner error or the refusal?), so Rust rejects the pair. Bounding `E` by
/// `std::error::Error`, as `anyhow` does, does not help: [`CircuitOpen`] and
/// [`Elapsed`] are errors too (so that `Box<dyn Error>`, `anyhow::Error` and
/// `std::io::Error` take them as they are). Nor does any bound that every
/// error type meets: the refusal types have every trait error types share,
/// and Rust cannot say "any type but these". A bound the refusal types
/// provably do not meet does help: nothing converts an `io::Error` into a
/// `CircuitOpen` or an `Elapsed`, while the clients whose calls need a
/// breaker or a timeout convert one into their error as a rule. (A new
/// refusal type must not get `From<std::io::Error>` either.)
///
/// For another crate's error type without `From<std::io::Error>`, wrap it
/// by hand with `.map_err(Error::Inner)?`:
///
/// ```
/// use backoff_runtime::Error;
///
/// fn parse(text: &str) -> Result<u16, Error<std::num::ParseIntError>> {
///     let n = text.parse().map_err(Error::Inner)?;
///     Ok(n)
/// }
/// assert!(matches!(parse("x"), Err(Error::Inner(_))));
/// ```
///
/// `?` alone does not compile there:
///
/// ```compile_fail,E0277
/// use backoff_runtime::Error;
///
/// fn parse(text: &str) -> Result<u16, Error<std::num::ParseIntError>> {
///     let n = text.parse()?;
///     Ok(n)
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`?` cannot convert `{Self}` into `backoff_runtime::Error<{Self}>`",
    label = "`{Self}` has no `From<std::io::Error>`: wrap it with `.map_err(backoff_runtime::Error::Inner)?`",
    note = "`backoff_runtime::Error<E>` converts with `?` only the error types that an `io::Error` converts into (see the docs of `backoff_runtime::ForeignError`)"
)]
pub trait ForeignError {}

#[diagnostic::do_not_recommend]
impl<E: From<std::io::Error>> ForeignError for E {}

/// `?` on a foreign error: [`Error::Inner`].
impl<E: ForeignError> From<E> for Error<E> {
    #[inline]
    fn from(e: E) -> Self {
        Error::Inner(e)
    }
}

/// A breaker's refusal: [`Error::CircuitOpen`].
impl<E> From<CircuitOpen> for Error<E> {
    #[inline]
    fn from(open: CircuitOpen) -> Self {
        Error::CircuitOpen(open)
    }
}

/// A throttle's rejection: [`Error::Rejected`].
/// `From` each refusal that carries nothing into its own variant.
macro_rules! refusals {
    ($($refusal:ident),*) => {$(
        impl<E> From<$refusal> for Error<E> {
            #[inline]
            fn from(_: $refusal) -> Self {
                Error::$refusal
            }
        }
    )*};
}

refusals!(Rejected, Cancelled, Elapsed);

impl<E: fmt::Display> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Inner(e) => fmt::Display::fmt(e, f),
            Error::CircuitOpen(open) => fmt::Display::fmt(open, f),
            Error::Elapsed => fmt::Display::fmt(&Elapsed, f),
            Error::Rejected => fmt::Display::fmt(&Rejected, f),
            Error::Cancelled => fmt::Display::fmt(&Cancelled, f),
        }
    }
}

impl<E: std::error::Error> std::error::Error for Error<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Inner(e) => e.source(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;
    use std::io;

    #[derive(Debug)]
    struct Outer(io::Error);

    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("outer")
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    impl From<io::Error> for Outer {
        fn from(e: io::Error) -> Self {
            Outer(e)
        }
    }

    fn fails() -> Result<(), Outer> {
        Err(Outer(io::Error::other("cause")))
    }

    fn question_mark() -> Result<(), Error<Outer>> {
        fails()?;
        Ok(())
    }

    #[test]
    fn question_mark_wraps_the_inner_error() {
        let e = question_mark().unwrap_err();
        assert!(matches!(e, Error::Inner(Outer(_))));
        assert_eq!(e.to_string(), "outer");
        assert_eq!(e.source().unwrap().to_string(), "cause", "transparent");
    }

    #[test]
    fn refusals() {
        let open = Error::<Outer>::from(CircuitOpen::default());
        assert!(matches!(open, Error::CircuitOpen(_)));
        assert_eq!(open.to_string(), CircuitOpen::default().to_string());
        assert!(open.source().is_none());
        let late = Error::<Outer>::from(Elapsed);
        assert!(matches!(late, Error::Elapsed));
        assert_eq!(late.to_string(), Elapsed.to_string());
        let rejected = Error::<Outer>::from(Rejected);
        assert!(matches!(rejected, Error::Rejected));
        assert_eq!(rejected.to_string(), Rejected.to_string());
        assert_eq!(rejected.decision(|_| true), Decision::Stop);
        let cancelled = Error::<Outer>::from(Cancelled);
        assert!(matches!(cancelled, Error::Cancelled));
        assert_eq!(cancelled.to_string(), "cancelled");
        assert_eq!(cancelled.decision(|_| true), Decision::Stop);
        assert!(late.source().is_none());
        assert!(!matches!(late, Error::Inner(_)));
    }

    #[test]
    fn an_error_of_errors_is_an_error() {
        fn is_error<T: std::error::Error + Send + Sync + 'static>(_: &T) {}
        let e = Error::Inner(io::Error::other("x"));
        is_error(&e);
        let boxed: Box<dyn std::error::Error + Send + Sync> = e.into();
        assert_eq!(boxed.to_string(), "x");
        // And a boxed error is a foreign error too.
        let nested: Error<Box<dyn std::error::Error + Send + Sync>> = boxed.into();
        assert_eq!(nested.to_string(), "x");
    }

    #[test]
    fn decisions() {
        let e = Error::Inner(7_u8);
        assert_eq!(e.decision(|n| *n > 5), Decision::Retry);
        assert_eq!(e.decision(|_| Decision::Throttled), Decision::Throttled);
        assert_eq!(Error::<u8>::Elapsed.decision(|_| false), Decision::Retry);
        assert_eq!(
            Error::<u8>::CircuitOpen(CircuitOpen::default()).decision(|_| true),
            Decision::Stop
        );
    }
}
