// `"1."`: the suggestion drops the dot (not `"1.ms"`).
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(max_elapsed = "1.")]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
