use backoff_runtime::retry;

#[retry(circuit = backoff_runtime::CircuitBreaker::new(1, 1, std::time::Duration::ZERO))]
fn f() -> std::io::Result<()> { Ok(()) }

fn main() {}
