//! Helpers shared by the integration tests of `backoff-runtime`.
//! Unpublished.

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};

/// A service that fails its first `failures` calls, then succeeds: the flaky
/// dependency of the tests.
#[derive(Debug)]
pub struct Flaky {
    failures: u32,
    calls: AtomicU32,
}

impl Flaky {
    /// Fails `failures` times, then succeeds.
    pub const fn new(failures: u32) -> Self {
        Flaky {
            failures,
            calls: AtomicU32::new(0),
        }
    }

    /// One call: `Err(n)` for the n-th failing call, then `Ok(n)`.
    pub fn call(&self) -> Result<u32, u32> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n <= self.failures { Err(n) } else { Ok(n) }
    }

    /// The calls made so far.
    pub fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

/// A current-thread tokio runtime whose clock is paused: it advances only
/// when every task waits on a timer, so virtual elapsed times are exact.
pub fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime")
}

/// Runs `f` to completion on a fresh [`paused_runtime`].
pub fn block_on_paused<F: Future>(f: F) -> F::Output {
    paused_runtime().block_on(f)
}
