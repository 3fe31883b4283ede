// A `const` where a literal belongs: the value is read when the code compiles; a run-time value goes through `policy`.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

const MAX_TRIES: u32 = 5;

#[retry(attempts = MAX_TRIES)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
