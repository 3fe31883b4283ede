// A throttle built in the attribute behind an `Arc` is as new for every
// call as one built bare: one error, on the expression.
use backoff_runtime::retry;
use backoff_runtime::AdaptiveThrottle;
use std::sync::Arc;
use std::time::Duration;

#[retry(throttle = Arc::new(AdaptiveThrottle::new(2.0, Duration::from_secs(120))))]
fn f() -> std::io::Result<()> { Ok(()) }

struct Client {
    breakers: std::collections::HashMap<String, backoff_runtime::CircuitBreaker>,
}

impl Client {
    // A constructor of the user's own is the same mistake.
    #[retry(budget = std::rc::Rc::new(backoff_runtime::RetryBudget::new(10, 0.1)))]
    fn g(&self) -> std::io::Result<()> { Ok(()) }

    // A lookup that returns a reference is not: this compiles.
    #[retry(circuit = self.breakers.get("a").unwrap())]
    fn h(&self) -> std::io::Result<()> { Ok(()) }
}

fn main() {}
