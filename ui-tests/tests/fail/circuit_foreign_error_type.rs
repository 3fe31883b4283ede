// Another crate's error type with `circuit`: the message says why no
// `impl From<CircuitOpen>` can be written for it, and never suggests one.
use backoff_runtime::retry;
use backoff_runtime::CircuitBreaker;
use std::time::Duration;

static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));

#[retry(circuit = BREAKER)]
fn f() -> Result<(), String> { Ok(()) }

fn main() {}
