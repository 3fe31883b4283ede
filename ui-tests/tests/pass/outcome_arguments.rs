// The outcome arguments compile as the contract writes them: `when_ok`,
// `on_giveup`, `context`, `timeout`, `retry_after_max`, `budget` and
// `circuit` as expressions (a field, an `Arc`, a keyed lookup), with
// `io::Result` functions using `circuit` and `timeout` directly; the futures
// stay `Send`.
use backoff_runtime::{retry, AttemptContext, CircuitBreaker, Decision, GiveUp, RetryBudget, RetryEvent};
use std::collections::HashMap;
use std::sync::Arc;

pub struct Response {
    pub status: u16,
}

fn unavailable(r: &Response) -> bool {
    r.status == 503
}

fn log_giveup(outcome: &Result<Response, std::io::Error>, g: &GiveUp) {
    if let Err(e) = outcome {
        eprintln!("gave up after {} calls ({}): {e}", g.attempts, g.reason);
    }
}

pub struct Client {
    breaker: CircuitBreaker,
    budget: Arc<RetryBudget>,
    per_host: HashMap<String, CircuitBreaker>,
}

impl Client {
    #[retry(attempts = 5, when_ok = unavailable, on_giveup = log_giveup, circuit = self.breaker, budget = &*self.budget, timeout = "30s", retry_after_max = "1m")]
    pub async fn get(&self, path: &str) -> std::io::Result<Response> {
        let _ = path;
        Ok(Response { status: 200 })
    }

    #[retry(context = ctx, circuit = self.per_host[host], on_retry = |outcome: &Result<Response, std::io::Error>, ev: &RetryEvent| { let _ = (outcome.is_ok(), ev.attempt); }, when_ok = |r| if r.status == 429 { Decision::Throttled } else { Decision::Stop })]
    pub fn fetch(&self, host: &str) -> std::io::Result<Response> {
        let AttemptContext { attempt, last, .. } = ctx;
        let _ = (host, attempt, last);
        Ok(Response { status: 200 })
    }
}

fn assert_send<T: Send>(_: T) {}

fn main() {
    let client = Client {
        breaker: CircuitBreaker::new(5, 1, std::time::Duration::from_secs(30)),
        budget: Arc::new(RetryBudget::new(10, 0.1)),
        per_host: HashMap::new(),
    };
    assert_send(client.get("/"));
}
