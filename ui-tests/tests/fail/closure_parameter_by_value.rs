// A closure parameter annotated with the error type itself, or the event by value, or `&mut`: one error on each type.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(when = |e: FetchError| { let _ = e; true }, on_retry = |e: &mut FetchError, event: backoff_runtime::RetryEvent| { let _ = (e, event); })]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
