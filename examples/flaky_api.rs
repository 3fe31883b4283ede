//! The Effect pattern "Implement Exponential Backoff for Retries": a flaky
//! API that fails three times and then succeeds, with each retry and its
//! delay logged. The Effect version hand-writes the loop; here it is one
//! attribute on a plain (blocking) function.
//!
//! ```text
//! cargo run -p backoff-workspace-tests --example flaky_api
//! ```

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

use backoff_runtime::{RetryEvent, retry};

#[derive(Debug)]
struct ApiError(&'static str);

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for ApiError {}

#[derive(Debug)]
struct Status {
    status: &'static str,
}

/// Calls so far, across retries.
static ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Fails on its first three calls, succeeds on the fourth. Full jitter (the
/// default) draws each delay uniformly from 0 up to 100, 200, 400 ms.
#[retry(exponential(base = "100ms", max = "5s"), attempts = 5, on_retry = log_retry)]
fn flaky_api_call() -> Result<Status, ApiError> {
    let attempt = ATTEMPTS.fetch_add(1, Ordering::Relaxed) + 1;
    println!("[API] Attempt {attempt}");
    if attempt < 4 {
        return Err(ApiError("Service temporarily unavailable (503)"));
    }
    println!("[SUCCESS] Succeeded on attempt {attempt}");
    Ok(Status { status: "ok" })
}

fn log_retry(error: &ApiError, event: &RetryEvent) {
    println!(
        "[BACKOFF] Attempt {} failed ({error}): {}ms delay",
        event.attempt,
        event.delay.as_millis()
    );
}

fn main() {
    println!("\n[START] Retrying flaky API with exponential backoff\n");
    match flaky_api_call() {
        Ok(result) => println!("\n[RESULT] {{\"status\":\"{}\"}}\n", result.status),
        Err(error) => println!("\n[ERROR] {error}\n"),
    }
}
