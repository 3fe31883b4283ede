// A strategy parameter beside a strategy that has no such parameter: the
// message says what that strategy takes.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(constant("1s"), factor = 2)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

#[retry(immediate, base = "1s")]
fn g() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
