use backoff_runtime::{CircuitBreaker, retry};
use std::sync::LazyLock;
use std::time::Duration;

// Stand-ins of `backoff_redis::RedisStore` and `SharedBreaker`: the
// attribute refuses the builder's call by its shape.
struct Store;
struct Shared(CircuitBreaker);

impl Store {
    fn breaker(&self, _name: &str, b: CircuitBreaker) -> Shared {
        Shared(b)
    }
}

impl Shared {
    fn quorum(self, _n: u32) -> Shared {
        self
    }
}

static STORE: Store = Store;
static PAYMENTS: LazyLock<Shared> =
    LazyLock::new(|| STORE.breaker("payments", CircuitBreaker::new(5, 1, Duration::from_secs(10))));

#[retry(circuit = PAYMENTS.quorum(2))]
fn pay() -> Result<u32, std::io::Error> {
    Ok(1)
}

#[retry(circuit = STORE.breaker("payments", CircuitBreaker::new(5, 1, Duration::from_secs(10))))]
fn refund() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
