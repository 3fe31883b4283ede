// A capitalized jitter name, quoted or not: the lowercase string.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(jitter = Full)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

#[retry(jitter = "Equal")]
fn g() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
