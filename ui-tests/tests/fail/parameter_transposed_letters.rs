// Two letters swapped is one edit: `dealy` is a typo of `delay`.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(constant(dealy = "1s"))]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
