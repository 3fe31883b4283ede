// A shared control of `backoff-redis` given to the wrong argument: one
// error each, a control of another kind told the argument it belongs to
// ("did you mean `circuit = PAYMENTS`?"), anything else the public trait
// and where each control goes, and never a source line of `backoff-redis`.
use backoff_redis::{RedisStore, SharedBreaker, SharedBudget};
use backoff_runtime::{retry, CircuitBreaker};
use std::sync::LazyLock;
use std::time::Duration;

static STORE: LazyLock<RedisStore> =
    LazyLock::new(|| RedisStore::new("redis://127.0.0.1/").unwrap());
static PAYMENTS: LazyLock<SharedBreaker> = LazyLock::new(|| {
    STORE.breaker("payments", CircuitBreaker::new(5, 1, Duration::from_secs(30)))
});

#[retry(budget = PAYMENTS)]
fn breaker_as_budget() -> std::io::Result<()> {
    Ok(())
}

#[retry(throttle = STORE)]
fn store_as_throttle() -> std::io::Result<()> {
    Ok(())
}

struct Client {
    breaker: Option<SharedBreaker>,
    budget: SharedBudget,
}

impl Client {
    #[retry(circuit = self.breaker)]
    fn optional_breaker(&self) -> std::io::Result<()> {
        Ok(())
    }

    #[retry(circuit = self.budget)]
    fn budget_as_circuit(&self) -> std::io::Result<()> {
        Ok(())
    }
}

fn main() {}
