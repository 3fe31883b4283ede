// `Duration::from_millis(100)` is translated to `"100ms"`, the whole expression underlined.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(exponential(base = std::time::Duration::from_millis(100)))]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
