// The runtime's `Jitter::Full` is translated to `"full"`.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(jitter = backoff_runtime::Jitter::Full)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
