// A duration by itself: put a strategy around it.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry("100ms")]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
