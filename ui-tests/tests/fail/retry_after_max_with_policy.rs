use backoff_runtime::{retry, Decision, Policy};
use std::time::Duration;

static POLICY: Policy = Policy::immediate();
fn classify(_: &()) -> Decision { Decision::RetryAfter(Duration::from_secs(1)) }

#[retry(policy = &POLICY, retry_after_max = "1m", when = classify)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
