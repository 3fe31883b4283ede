// `attempts = u32::MAX` means no limit: `unlimited`.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(attempts = u32::MAX)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
