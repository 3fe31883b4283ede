use backoff_runtime::{retry, AdaptiveThrottle};
use std::time::Duration;

static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));

#[retry(hedge = "20ms", attempts = 2, throttle = THROTTLE)]
async fn fetch() -> Result<(), std::io::Error> {
    Ok(())
}

#[retry(hedge = "20ms", attempts = 2, on_retry = |e| println!("{e:?}"))]
async fn arity() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
