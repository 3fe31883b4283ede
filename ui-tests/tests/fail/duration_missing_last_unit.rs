// `"1m30"`: the last number lacks its unit, the next smaller one (not `"30s"`).
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(max_elapsed = "1m30")]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
