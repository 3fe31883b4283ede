use backoff_runtime::retry;
use backoff_runtime::CircuitBreaker;
use std::time::Duration;

static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));

#[retry(throttle = BREAKER)]
fn f() -> std::io::Result<()> { Ok(()) }

fn main() {}
