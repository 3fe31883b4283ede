use backoff_runtime::{CircuitBreaker, retry};
use std::time::Duration;

static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(10));

// One error, at the return type (not a second one at `circuit`).
#[retry(circuit = BREAKER)]
fn not_result() -> Option<u32> {
    Some(1)
}

fn main() {}
