// `constant(1)`: a duration needs quotes and a unit.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(constant(1))]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
