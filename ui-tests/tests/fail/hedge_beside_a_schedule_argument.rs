// `hedge` sets when each attempt starts: every argument that also says when
// the next attempt starts is refused beside it, each with its own error
// (`throttled`, `policy`, `sleep` and `retry_after_max` here; a strategy,
// `jitter` and `max_elapsed` in `hedge_with_a_schedule`).
use backoff_runtime::{retry, Decision, Policy};
use std::time::Duration;

static POLICY: Policy = Policy::exponential(Duration::from_millis(10));

async fn nap(_: Duration) {}

#[retry(hedge = "20ms", throttled(constant("1s"), attempts = 3), when = |_| Decision::Throttled)]
async fn throttled() -> Result<(), std::io::Error> {
    Ok(())
}

#[retry(hedge = "20ms", policy = POLICY)]
async fn with_policy() -> Result<(), std::io::Error> {
    Ok(())
}

#[retry(hedge = "20ms", attempts = 2, sleep = nap)]
async fn with_sleep() -> Result<(), std::io::Error> {
    Ok(())
}

#[retry(hedge = "p95", attempts = 3, retry_after_max = "10s")]
async fn with_retry_after_max() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
