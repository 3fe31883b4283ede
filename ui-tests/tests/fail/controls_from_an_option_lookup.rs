use backoff_runtime::{CircuitBreaker, RetryBudget, retry};
use std::collections::HashMap;

struct Client {
    budgets: HashMap<String, RetryBudget>,
    breaker: Option<CircuitBreaker>,
}

// A lookup that borrows is kept elsewhere: one error each, on the `Option`.
impl Client {
    #[retry(budget = self.budgets.get("a"))]
    fn a(&self) -> Result<u32, std::io::Error> {
        Ok(1)
    }

    #[retry(circuit = self.breaker.as_ref())]
    fn b(&self) -> Result<u32, std::io::Error> {
        Ok(1)
    }
}

fn main() {}
