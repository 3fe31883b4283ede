use backoff_runtime::retry;
use backoff_runtime::AdaptiveThrottle;
use std::time::Duration;

#[retry(throttle = AdaptiveThrottle::new(2.0, Duration::from_secs(120)))]
fn f() -> std::io::Result<()> { Ok(()) }

fn main() {}
