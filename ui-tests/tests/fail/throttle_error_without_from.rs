use backoff_runtime::retry;
use backoff_runtime::AdaptiveThrottle;
use std::time::Duration;

static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));

#[derive(Debug)]
struct Error;

#[retry(throttle = THROTTLE)]
fn f() -> Result<(), Error> { Ok(()) }

fn main() {}
