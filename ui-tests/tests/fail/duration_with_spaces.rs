// One rule for spaces: none inside a duration, anywhere.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(max_elapsed = "1m 30s")]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
