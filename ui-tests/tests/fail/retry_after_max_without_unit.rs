use backoff_runtime::{retry, Decision};
use std::time::Duration;

fn classify(_: &()) -> Decision { Decision::RetryAfter(Duration::from_secs(1)) }

#[retry(retry_after_max = "300", when = classify)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
