//! Deadline-aware retries: `max_elapsed = "2s"` with `attempts = unlimited`
//! against a service that never recovers.
//!
//! The delays grow 100, 200, 400, 800 ms, then 1 s (the cap); jitter is off
//! so the run is the same every time. After the fifth attempt (1.5 s in)
//! the next sleep would end at 2.5 s, past the deadline, so the call gives
//! up at once instead of sleeping, and returns the last error: the caller
//! hears back within 2 s, never after.
//!
//! ```text
//! cargo run -p backoff-workspace-tests --example deadline
//! ```

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use backoff_runtime::retry;

const DEADLINE: Duration = Duration::from_secs(2);

#[derive(Debug)]
struct Unavailable;

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("service unavailable")
    }
}

impl std::error::Error for Unavailable {}

static CALLS: AtomicU32 = AtomicU32::new(0);

/// A service that is down for good.
#[retry(
    exponential(base = "100ms", max = "1s"),
    jitter = "none",
    attempts = unlimited,
    max_elapsed = "2s",
    on_retry = |e, ev| {
        let ends = ev.elapsed + ev.delay;
        assert!(ends <= DEADLINE, "a sleep never ends past the deadline");
        println!(
            "  attempt {} failed ({e}) at {:>4} ms; sleeping {:>4} ms, until {:>4} ms",
            ev.attempt,
            ev.elapsed.as_millis(),
            ev.delay.as_millis(),
            ends.as_millis(),
        );
    }
)]
fn call_service() -> Result<String, Unavailable> {
    CALLS.fetch_add(1, Ordering::Relaxed);
    Err(Unavailable)
}

fn main() {
    println!("calling a dead service, deadline {DEADLINE:?}, unlimited attempts");
    let start = Instant::now();
    let result = call_service();
    let elapsed = start.elapsed();
    println!(
        "gave up after {} attempts and {} ms (deadline {} ms): {result:?}",
        CALLS.load(Ordering::Relaxed),
        elapsed.as_millis(),
        DEADLINE.as_millis()
    );
    println!("the next sleep (1000 ms) would have ended at 2500 ms, so it never started");
}
