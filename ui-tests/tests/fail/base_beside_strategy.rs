// A strategy parameter beside the strategy: where it belongs, with the value.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(linear(max = "5s"), base = "200ms")]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
