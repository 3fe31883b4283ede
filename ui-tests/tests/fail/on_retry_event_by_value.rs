// An `on_retry` that takes the event by value.
use backoff_runtime::{retry, RetryEvent};

fn log(_: &u32, event: RetryEvent) { eprintln!("{}", event.attempt); }

#[retry(on_retry = log)]
fn f() -> Result<(), u32> { Err(1) }

fn main() {}
