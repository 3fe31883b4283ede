use backoff_runtime::retry;
use backoff_runtime::CircuitBreaker;
use std::time::Duration;

static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));

#[derive(Debug)]
struct Error;

#[retry(circuit = BREAKER)]
fn f() -> Result<(), Error> { Ok(()) }

fn main() {}
