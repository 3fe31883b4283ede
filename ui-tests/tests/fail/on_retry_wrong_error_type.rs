// An `on_retry` whose first parameter is not the error.
use backoff_runtime::{retry, RetryEvent};

fn log(message: &String, _: &RetryEvent) { eprintln!("{message}"); }

#[retry(on_retry = log)]
fn f() -> Result<(), u32> { Err(1) }

fn main() {}
