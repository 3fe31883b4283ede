// An extra comma: remove it (not the list of every argument), and the rest is still read.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(attempts = 3,, jitter = "ful")]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
