// A `const` duration: literal only, with the `Policy` constructor that takes it.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

const BASE: std::time::Duration = std::time::Duration::from_millis(100);

#[retry(linear(base = BASE))]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
