// `base = 0.5`: read as seconds, written `"500ms"`.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(exponential(base = 0.5))]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
