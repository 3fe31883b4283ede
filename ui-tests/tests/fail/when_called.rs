// `when = is_transient()`: the function itself, not a call.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

fn is_transient(_: &FetchError) -> bool { true }

#[retry(when = is_transient())]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
