// `strategy = "exponential"`: the strategy is written by itself.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(strategy = "exponential")]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
