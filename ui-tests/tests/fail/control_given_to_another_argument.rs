// A breaker, a budget or a throttle given to another control's argument:
// one error, on the value, saying which argument it belongs to with the
// expression as written. A type that is two controls is taken as the
// argument's, and a right one compiles.
use backoff_runtime::control::{Budget, Circuit};
use backoff_runtime::{AdaptiveThrottle, CircuitBreaker, RetryBudget, retry};
use std::time::Duration;

static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));
static MY_BUDGET: RetryBudget = RetryBudget::new(10, 0.1);
static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));

#[retry(throttle = BREAKER, attempts = 2)]
fn breaker_as_throttle() -> std::io::Result<()> {
    Ok(())
}

#[retry(circuit = MY_BUDGET)]
fn budget_as_circuit() -> std::io::Result<()> {
    Ok(())
}

#[retry(budget = THROTTLE)]
fn throttle_as_budget() -> std::io::Result<()> {
    Ok(())
}

// Both a budget and a breaker: fine as either.
pub struct Controls {
    budget: RetryBudget,
    breaker: CircuitBreaker,
}
impl Budget for Controls {
    fn as_budget(&self) -> &RetryBudget {
        &self.budget
    }
}
impl Circuit for Controls {
    fn as_circuit(&self) -> &CircuitBreaker {
        &self.breaker
    }
}

impl Controls {
    #[retry(budget = self, circuit = self, throttle = THROTTLE, attempts = 2)]
    fn both(&self) -> std::io::Result<()> {
        Ok(())
    }
}

fn main() {}
