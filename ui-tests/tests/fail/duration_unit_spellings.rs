// Other spellings of units: `MS`, `msec`, `d` are respelled `ms`, `ms`, `24h`.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(exponential(base = "500MS", max = "1d"), max_elapsed = "100msec")]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
