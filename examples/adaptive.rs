//! An adaptive policy that tells errors apart: `when = classify` returns a
//! `backoff_runtime::Decision` instead of a `bool`.
//!
//! - transient (503, a timeout): `Decision::Retry`, with the exponential
//!   backoff and jitter of the attribute;
//! - throttled (429 with a `Retry-After` hint): `Decision::RetryAfter(d)`,
//!   which waits exactly what the server asked, without jitter;
//! - permanent (400, 401): `Decision::Stop`, which returns the error at once.
//!
//! Three scripted scenarios show each path. Run it with:
//!
//! ```text
//! cargo run -p backoff-workspace-tests --example adaptive
//! ```

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use backoff_runtime::{Decision, RetryEvent, retry};

#[derive(Debug, Clone)]
enum ApiError {
    /// The request timed out.
    Timeout,
    /// The server answered with an error status, maybe with `Retry-After`.
    Status {
        code: u16,
        retry_after: Option<Duration>,
    },
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiError::Timeout => f.write_str("timeout"),
            ApiError::Status {
                code,
                retry_after: Some(after),
            } => write!(f, "HTTP {code} (Retry-After: {} ms)", after.as_millis()),
            ApiError::Status { code, .. } => write!(f, "HTTP {code}"),
        }
    }
}

impl std::error::Error for ApiError {}

/// Transient errors are retried with backoff, throttling waits as long as
/// the server says, and everything else stops at once.
fn classify(e: &ApiError) -> Decision {
    match e {
        ApiError::Timeout | ApiError::Status { code: 503, .. } => Decision::Retry,
        ApiError::Status {
            code: 429,
            retry_after: Some(after),
        } => Decision::RetryAfter(*after),
        ApiError::Status { code: 429, .. } => Decision::Retry,
        ApiError::Status { .. } => Decision::Stop, // 400, 401, 404, ...
    }
}

fn log_retry(e: &ApiError, ev: &RetryEvent) {
    println!(
        "    attempt {} failed: {e} -> retry in {} ms",
        ev.attempt,
        ev.delay.as_millis()
    );
}

#[retry(
    exponential(base = "100ms", max = "2s"),
    attempts = 4,
    when = classify,
    on_retry = log_retry
)]
async fn call(server: &Server) -> Result<&'static str, ApiError> {
    server.handle().await
}

#[tokio::main]
async fn main() {
    let throttled = ApiError::Status {
        code: 429,
        retry_after: Some(Duration::from_millis(300)),
    };
    let scenarios = [
        (
            "transient: 503, then a timeout, then 200",
            Server::new([Err(status(503)), Err(ApiError::Timeout), Ok("data")]),
        ),
        (
            "throttled: 429 with Retry-After 300 ms, then 200",
            Server::new([Err(throttled), Ok("data")]),
        ),
        (
            "permanent: 401, then 200 (never reached)",
            Server::new([Err(status(401)), Ok("data")]),
        ),
    ];

    for (name, server) in &scenarios {
        println!("{name}");
        let start = Instant::now();
        let outcome = match call(server).await {
            Ok(body) => format!("Ok({body:?})"),
            Err(e) => format!("Err({e})"),
        };
        println!(
            "  => {outcome} after {} call(s), {} ms\n",
            server.calls(),
            start.elapsed().as_millis()
        );
    }
}

fn status(code: u16) -> ApiError {
    ApiError::Status {
        code,
        retry_after: None,
    }
}

/// A simulated server that plays back a script, one response per call
/// (and 200 once the script runs out).
struct Server {
    script: Vec<Result<&'static str, ApiError>>,
    calls: AtomicUsize,
}

impl Server {
    fn new(script: impl Into<Vec<Result<&'static str, ApiError>>>) -> Self {
        Server {
            script: script.into(),
            calls: AtomicUsize::new(0),
        }
    }

    async fn handle(&self) -> Result<&'static str, ApiError> {
        tokio::time::sleep(Duration::from_millis(5)).await; // the round trip
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        self.script.get(call).cloned().unwrap_or(Ok("data"))
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }
}
