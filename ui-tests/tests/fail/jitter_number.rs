// `jitter = 0.2`: a spread of ±20% is `scattered(0.2)`.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(jitter = 0.2)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
