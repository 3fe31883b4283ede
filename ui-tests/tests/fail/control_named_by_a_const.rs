// A `const` given to `circuit` or `throttle` (a `LazyLock` of a shared
// breaker, a throttle) would be a new control at each use, which limits
// nothing: one error each, on the name, saying to make it a `static`.
use backoff_redis::{RedisStore, SharedBreaker};
use backoff_runtime::{retry, AdaptiveThrottle, CircuitBreaker};
use std::sync::LazyLock;
use std::time::Duration;

static STORE: LazyLock<RedisStore> =
    LazyLock::new(|| RedisStore::new("redis://127.0.0.1/").unwrap());
const LAZY: LazyLock<SharedBreaker> = LazyLock::new(|| {
    STORE.breaker("payments", CircuitBreaker::new(5, 1, Duration::from_secs(30)))
});
const THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));

#[retry(circuit = LAZY)]
fn lazy_breaker() -> std::io::Result<()> {
    Ok(())
}

#[retry(throttle = THROTTLE, attempts = 2)]
async fn throttled() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
