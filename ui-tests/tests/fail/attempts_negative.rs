// `attempts = -1` cannot be negative (not "the most is 4294967295").
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(attempts = -1)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
