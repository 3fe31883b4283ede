// `"1e3ms"`: no exponents, the number written out (not "unknown unit `e`").
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(max_elapsed = "1e3ms")]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
