// Another library's `multiplier` inside `exponential`: our `factor`.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(exponential(multiplier = 3))]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
