// An argument inside the strategy's parentheses: it goes after the strategy.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(exponential(base = "1s", attempts = 5))]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
