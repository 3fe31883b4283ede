use backoff_runtime::retry;

#[retry(budget = backoff_runtime::RetryBudget::new(1, 0.1))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
