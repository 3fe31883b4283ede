// An `async fn` as `on_retry`: its future would never run; one error that
// says what `on_retry` must return.
use backoff_runtime::{retry, RetryEvent};

async fn log(_: &u32, _: &RetryEvent) {}

#[retry(on_retry = log)]
fn f() -> Result<(), u32> { Err(1) }

fn main() {}
