//! The headline of `#[retry]`: an `async fn` that fetches a page, retried
//! with exponential backoff and full jitter, but only on transient errors.
//!
//! The service is simulated in-process (no network): `/flaky` answers 503
//! twice and then 200, `/missing` always answers 404. The first fetch is
//! retried until it succeeds; the second fails at once, because a 404 will
//! not go away by asking again. The sleeps are real: the whole run takes a
//! few hundred milliseconds.
//!
//! ```text
//! cargo run --example fetch
//! ```

use std::fmt;
use std::sync::LazyLock;
use std::time::Instant;

use backoff_runtime::retry;

/// A fetched page.
#[derive(Debug)]
struct Page {
    url: String,
    body: String,
}

/// The HTTP status of a failed request.
#[derive(Debug)]
struct FetchError {
    status: u16,
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reason = match self.status {
            404 => "Not Found",
            503 => "Service Unavailable",
            _ => "error",
        };
        write!(f, "HTTP {} {reason}", self.status)
    }
}

impl std::error::Error for FetchError {}

/// Overload and server errors may clear up; anything else will not.
fn is_transient(e: &FetchError) -> bool {
    matches!(e.status, 429 | 500..=599)
}

/// Fetches `url`: up to 5 attempts, sleeping a uniformly random time in
/// 0..=100 ms, then 0..=200 ms, ... (capped at 5 s) between them.
#[retry(
    exponential(base = "100ms", max = "5s"),
    attempts = 5,
    jitter = "full",
    when = is_transient,
    on_retry = |e, ev| println!(
        "{} attempt {} failed with {e}; retrying in {} ms",
        stamp(),
        ev.attempt,
        ev.delay.as_millis(),
    )
)]
async fn fetch(url: &str) -> Result<Page, FetchError> {
    println!("{} GET {url} (simulated)", stamp());
    service::get(url).await
}

#[tokio::main]
async fn main() {
    LazyLock::force(&START);
    println!(
        "The service is simulated in this process; no request leaves the machine.\n\
         /flaky answers 503 twice, then 200; /missing always answers 404.\n"
    );

    for url in ["https://example.com/flaky", "https://example.com/missing"] {
        match fetch(url).await {
            Ok(page) => println!("{} => Ok: {} says {:?}\n", stamp(), page.url, page.body),
            Err(e) => println!("{} => Err: {e} (not transient: no retry)\n", stamp()),
        }
    }
}

/// When the program started, for the timestamps.
static START: LazyLock<Instant> = LazyLock::new(Instant::now);

fn stamp() -> String {
    format!("[{:>4} ms]", START.elapsed().as_millis())
}

/// The simulated flaky service.
mod service {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    use super::{FetchError, Page};

    /// `/missing` is always 404; `/flaky` is 503 on its first two requests.
    pub(super) async fn get(url: &str) -> Result<Page, FetchError> {
        static FLAKY_REQUESTS: AtomicU32 = AtomicU32::new(0);

        tokio::time::sleep(Duration::from_millis(5)).await; // the round trip
        if url.ends_with("/missing") {
            return Err(FetchError { status: 404 });
        }
        if FLAKY_REQUESTS.fetch_add(1, Ordering::Relaxed) < 2 {
            return Err(FetchError { status: 503 });
        }
        Ok(Page {
            url: url.to_owned(),
            body: "<h1>hello</h1>".to_owned(),
        })
    }
}
