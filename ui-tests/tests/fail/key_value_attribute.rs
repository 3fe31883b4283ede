// `#[retry = ".."]`: rustc refuses the form; the macro adds no second error.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry = "100ms"]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
