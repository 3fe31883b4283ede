// Another library's `max_delay` beside the strategy: the strategy's `max`.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(exponential(base = "100ms"), max_delay = "5s")]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
