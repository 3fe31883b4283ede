//! Clocks for `max_elapsed` and [`RetryEvent::elapsed`](crate::RetryEvent).
//!
//! A clock is a plain `fn() -> Instant`. Blocking loops use
//! [`system`]; async loops use [`tokio()`] (with the `tokio` feature), which
//! follows tokio's paused virtual time in tests.

use std::time::Instant;

/// A monotonic clock: a function returning the current instant.
pub type Clock = fn() -> Instant;

/// [`Instant::now`].
///
/// ```
/// let t = backoff_runtime::clock::system();
/// assert!(backoff_runtime::clock::system() >= t);
/// ```
pub fn system() -> Instant {
    Instant::now()
}

/// `tokio::time::Instant::now()`, which advances with tokio's virtual time
/// when the runtime's clock is paused.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let t = backoff_runtime::clock::tokio();
/// assert!(backoff_runtime::clock::tokio() >= t);
/// # }
/// ```
#[cfg(feature = "tokio")]
pub fn tokio() -> Instant {
    ::tokio::time::Instant::now().into_std()
}

/// The clock async loops use: [`tokio()`] with the `tokio` feature, else
/// [`system`].
pub(crate) const fn for_async() -> Clock {
    #[cfg(feature = "tokio")]
    return tokio;
    #[cfg(not(feature = "tokio"))]
    system
}
