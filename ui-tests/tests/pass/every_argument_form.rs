// Every argument form of the spec's grammar compiles.
use backoff_runtime::{retry, Decision, Policy, RetryEvent};
use std::time::Duration;

#[derive(Debug)]
pub struct FetchError {
    transient: bool,
}

fn is_transient(e: &FetchError) -> bool {
    e.transient
}

fn classify(e: &FetchError) -> Decision {
    if e.transient { Decision::Retry } else { Decision::Stop }
}

fn log(_: &FetchError, _: &RetryEvent) {}
fn nap(_: Duration) {}
async fn async_nap(_: Duration) {}

static POLICY: Policy = Policy::immediate().attempts(2);

#[retry(exponential(base = "100ms", max = "5s"), attempts = 5, jitter = "full", when = is_transient)]
async fn fetch(url: &str) -> Result<String, FetchError> {
    let _ = url;
    Ok(String::new())
}

#[retry]
fn defaults() -> Result<(), FetchError> { Ok(()) }

#[retry(exponential(base = "250ms", factor = 1.5, max = "1m30s"))]
fn exponential() -> Result<(), FetchError> { Ok(()) }

#[retry(exponential)]
fn exponential_bare() -> Result<(), FetchError> { Ok(()) }

#[retry(linear(base = "1.5s", max = "2m"), attempts = unlimited, max_elapsed = "10m")]
fn linear() -> Result<(), FetchError> { Ok(()) }

#[retry(constant("1s"), jitter = "equal")]
fn constant() -> Result<(), FetchError> { Ok(()) }

#[retry(constant(delay = "500ms"), jitter = "half")]
fn constant_named() -> Result<(), FetchError> { Ok(()) }

#[retry(constant, jitter = scattered(0.25))]
fn constant_default() -> Result<(), FetchError> { Ok(()) }

#[retry(fibonacci(base = "10ms", max = "1s"), jitter = "none")]
fn fibonacci() -> Result<(), FetchError> { Ok(()) }

#[retry(decorrelated(base = "5ms", max = "2s"))]
fn decorrelated() -> Result<(), FetchError> { Ok(()) }

#[retry(decorrelated, jitter = "none")]
fn decorrelated_no_jitter() -> Result<(), FetchError> { Ok(()) }

#[retry(immediate, attempts = 4294967295)]
fn immediate() -> Result<(), FetchError> { Ok(()) }

#[retry(when = classify, on_retry = log, sleep = nap)]
fn hooks() -> Result<(), FetchError> { Ok(()) }

#[retry(when = |e| e.transient, on_retry = |e, ev| println!("{e:?} {}", ev.attempt))]
fn closures() -> Result<(), FetchError> { Ok(()) }

#[retry(when = |_| Decision::RetryAfter(Duration::from_secs(1)), sleep = async_nap)]
async fn retry_after() -> Result<(), FetchError> { Ok(()) }

#[retry(policy = &POLICY)]
fn policy_ref() -> Result<(), FetchError> { Ok(()) }

#[retry(policy = Policy::constant(Duration::from_millis(n)).attempts(3), when = is_transient)]
fn policy_from_argument(n: u64) -> Result<u64, FetchError> { Ok(n) }

#[retry(crate = "::backoff_runtime", attempts = 2)]
fn explicit_crate() -> Result<(), FetchError> { Ok(()) }

fn main() {
    let _ = fetch("x");
    let _ = (defaults(), exponential(), exponential_bare(), linear(), constant(), constant_named());
    let _ = (constant_default(), fibonacci(), decorrelated(), decorrelated_no_jitter(), immediate());
    let _ = (hooks(), closures(), retry_after(), policy_ref(), policy_from_argument(1), explicit_crate());
}
