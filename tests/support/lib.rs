//! Helpers shared by the integration tests of `backoff-runtime`.
//! Unpublished.

use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The instants of a call's attempts on tokio's clock (paused, in the
/// schedule tests), each failing with `"down"`.
#[derive(Debug, Default)]
pub struct AttemptLog(Mutex<Vec<tokio::time::Instant>>);

impl AttemptLog {
    /// Logs an attempt now; it fails.
    pub fn attempt(&self) -> Result<(), &'static str> {
        self.0.lock().unwrap().push(tokio::time::Instant::now());
        Err("down")
    }

    /// How many attempts ran.
    pub fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// The sleeps between the attempts.
    pub fn gaps(&self) -> Vec<Duration> {
        let times = self.0.lock().unwrap();
        times.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// [`gaps`](AttemptLog::gaps) in milliseconds.
    pub fn gaps_ms(&self) -> Vec<u128> {
        self.gaps().iter().map(Duration::as_millis).collect()
    }
}

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

/// A seeded lognormal latency, median 10 ms (SplitMix64 and Box–Muller):
/// the heavy tail the hedging tests learn from.
pub struct LogNormal {
    state: u64,
    sigma: f64,
}

impl LogNormal {
    /// A latency of spread `sigma` (the log's standard deviation), drawn
    /// from `seed`.
    pub fn new(seed: u64, sigma: f64) -> Self {
        LogNormal { state: seed, sigma }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    #[expect(clippy::cast_precision_loss)]
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// The next latency, at most a minute.
    pub fn draw(&mut self) -> std::time::Duration {
        let (u, v) = (self.unit(), self.unit());
        let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        std::time::Duration::from_secs_f64((0.010 * (self.sigma * z).exp()).min(60.0))
    }
}
