// Another library's `max_retries`: `attempts` counts calls, so 3 retries are `attempts = 4`.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(max_retries = 3)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
