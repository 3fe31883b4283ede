// `attempts: 3`: the `:` is the mistake (not "`attempts` needs a value").
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(attempts: 3)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
