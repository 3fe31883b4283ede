// A quoted strategy name: without quotes.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry("exponential")]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
