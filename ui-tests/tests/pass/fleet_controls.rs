// `throttled`, `budget`, `circuit` and `attempt_timeout` compile, and the
// future stays `Send`; `throttled` takes any schedule an `on(..)` arm
// takes (composed, `sidekiq`, `buckets`).
use backoff_runtime::{retry, CircuitBreaker, CircuitOpen, Decision, Elapsed, RetryBudget};
use std::time::Duration;

#[derive(Debug)]
pub enum Error {
    Throttled,
    Unavailable,
    TimedOut,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self { Error::Unavailable }
}

impl From<Elapsed> for Error {
    fn from(_: Elapsed) -> Self { Error::TimedOut }
}

fn classify(e: &Error) -> Decision {
    match e {
        Error::Throttled => Decision::Throttled,
        _ => Decision::Retry,
    }
}

static BUDGET: RetryBudget = RetryBudget::new(10, 0.1);
static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 2, Duration::from_secs(30));

#[retry(
    exponential(base = "100ms", max = "5s"),
    attempts = 5,
    throttled(exponential(base = "500ms", max = "30s"), attempts = 10),
    when = classify,
    budget = BUDGET,
    circuit = BREAKER,
    attempt_timeout = "2s",
)]
async fn call(id: u32) -> Result<u32, Error> {
    Ok(id)
}

#[retry(throttled(decorrelated, attempts = unlimited), when = classify, budget = BUDGET)]
fn sync_call() -> Result<(), Error> {
    Ok(())
}

#[retry(
    throttled(chain(constant("1s", times = 2), exponential(base = "2s", max = "1m")), attempts = 6),
    when = classify,
    jitter = "none",
)]
async fn composed_call() -> Result<(), Error> {
    Ok(())
}

#[retry(throttled(sidekiq(unit = "1ms"), attempts = 4), when = classify)]
fn sidekiq_call() -> Result<(), Error> {
    Ok(())
}

#[retry(throttled(buckets(unit = "1ms", max = "20ms"), attempts = 255), when = classify)]
fn buckets_call() -> Result<(), Error> {
    Ok(())
}

fn assert_send<T: Send>(_: &T) {}

fn main() {
    assert_send(&call(1));
    let _ = sync_call();
    assert_send(&composed_call());
    let _ = (sidekiq_call(), buckets_call());
}
