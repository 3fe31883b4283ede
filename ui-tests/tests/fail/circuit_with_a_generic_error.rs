use backoff_runtime::{CircuitBreaker, retry};
use std::time::Duration;

static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(10));

#[retry(circuit = BREAKER)]
fn call<E: std::fmt::Debug>(op: fn() -> Result<u32, E>) -> Result<u32, E> {
    op()
}

// A bound by a trait of the user's own may imply the `From`: left to the
// compiler, no error here.
trait Refusable: From<backoff_runtime::CircuitOpen> {}

#[retry(circuit = BREAKER)]
fn call_bounded<E: Refusable>(op: fn() -> Result<u32, E>) -> Result<u32, E> {
    op()
}

#[retry(circuit = BREAKER)]
fn call_from<E>(op: fn() -> Result<u32, E>) -> Result<u32, E>
where
    E: From<backoff_runtime::CircuitOpen> + std::fmt::Debug,
{
    op()
}

fn main() {}
