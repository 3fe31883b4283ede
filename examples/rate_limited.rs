//! Retry only the errors a predicate picks, as in the Clojure essay
//! "Exponential Backoff" (a `try-backoff` macro with a predicate): the
//! service says "queue capacity" in the body of its response when it is
//! too busy, and only that is worth retrying.
//!
//! `when` is an untyped closure over the error, `on_retry` another one that
//! prints each retry. A busy service is retried until it answers; any other
//! error comes back at once.
//!
//! ```text
//! cargo run -p backoff-workspace-tests --example rate_limited
//! ```

use std::cell::Cell;
use std::fmt;

use backoff_runtime::retry;

/// An error response.
#[derive(Debug, Clone)]
struct HttpError {
    status: u16,
    body: String,
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}: {}", self.status, self.body)
    }
}

impl std::error::Error for HttpError {}

/// A client for a simulated service that answers the given errors in turn,
/// then succeeds.
struct Client {
    errors: Vec<HttpError>,
    calls: Cell<usize>,
}

impl Client {
    /// The essay's `(exponential-backoff 1000 2 10000 p? ...)`, ten times
    /// faster so the example runs quickly.
    #[retry(
        exponential(base = "100ms", factor = 2, max = "1s"),
        attempts = 5,
        when = |e| e.body.contains("queue capacity"),
        on_retry = |e, ev| println!(
            "  retry {} in {} ms after: {e}",
            ev.attempt,
            ev.delay.as_millis()
        )
    )]
    fn get(&self, path: &str) -> Result<String, HttpError> {
        let call = self.calls.get();
        self.calls.set(call + 1);
        println!("  GET {path}");
        match self.errors.get(call) {
            Some(e) => Err(e.clone()),
            None => Ok(format!("contents of {path}")),
        }
    }
}

fn busy() -> HttpError {
    HttpError {
        status: 503,
        body: "request rejected: queue capacity exceeded".into(),
    }
}

fn main() {
    println!("a busy service (queue capacity twice, then 200):");
    let client = Client {
        errors: vec![busy(), busy()],
        calls: Cell::new(0),
    };
    report(client.get("/resource"));
    println!();

    println!("a broken service (500 without \"queue capacity\"):");
    let client = Client {
        errors: vec![HttpError {
            status: 500,
            body: "internal server error".into(),
        }],
        calls: Cell::new(0),
    };
    report(client.get("/resource"));
}

fn report(result: Result<String, HttpError>) {
    match result {
        Ok(body) => println!("  => Ok({body:?})"),
        Err(e) => println!("  => Err({e})"),
    }
}
