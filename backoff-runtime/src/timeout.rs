//! [`Elapsed`]: the error of an attempt cut short by `attempt_timeout`.

use core::fmt;

/// The error of an attempt that ran longer than `attempt_timeout`; the
/// attribute turns it into the function's error with `E::from(Elapsed)`, and
/// the attempt counts as failed.
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
/// assert_eq!(Elapsed.to_string(), "attempt timed out");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Elapsed;

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("attempt timed out")
    }
}

impl std::error::Error for Elapsed {}
