// `immediate(attempts = 3)`: `attempts` is an argument of its own.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(immediate(attempts = 3))]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
