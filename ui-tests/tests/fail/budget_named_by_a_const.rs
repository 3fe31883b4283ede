use backoff_runtime::{retry, RetryBudget};

const BUDGET: RetryBudget = RetryBudget::new(10, 0.1);

#[retry(budget = BUDGET)]
fn f() -> Result<(), String> { Ok(()) }

fn main() {}
