// Another library's `max_attempts`: our name is `attempts`.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(max_attempts = 5)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
