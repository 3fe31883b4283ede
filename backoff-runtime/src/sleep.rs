//! The default sleeps: `std::thread::sleep` for blocking loops and
//! `tokio::time::sleep` (feature `tokio`) for async ones. Users name
//! `std::thread::sleep` and `tokio::time::sleep` themselves; these skip a
//! zero delay.
//!
//! Any `fn(Duration)` or `fn(Duration) -> impl Future<Output = ()>` can
//! replace them (`sleep = ...` in the attribute,
//! [`Policy::retry_async_with_sleep`](crate::Policy::retry_async_with_sleep)),
//! for another runtime or for tests that record the sleeps instead.

use core::time::Duration;

/// Blocks the thread for `d` with [`std::thread::sleep`]; a zero delay
/// returns at once.
#[inline]
pub fn blocking(d: Duration) {
    if !d.is_zero() {
        std::thread::sleep(d);
    }
}

/// Sleeps for `d` with `tokio::time::sleep`, which follows tokio's paused
/// virtual time in tests. Durations too long for tokio's timer saturate to
/// its far future; nothing panics. A zero delay returns at once instead of
/// waiting for the timer's next millisecond tick.
#[cfg(feature = "tokio")]
pub(crate) async fn tokio(d: Duration) {
    if !d.is_zero() {
        ::tokio::time::sleep(d).await;
    }
}

#[cfg(all(test, feature = "tokio"))]
mod tests {
    use core::time::Duration;

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn tokio_follows_the_paused_clock() {
        let start = ::tokio::time::Instant::now();
        super::tokio(Duration::from_secs(5)).await;
        assert_eq!(start.elapsed(), Duration::from_secs(5));
    }
}
