// Other libraries' names for `when`, `on_retry`, `max_elapsed` and a
// scattered jitter: each says our name, with the value given.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

fn is_transient(_: &FetchError) -> bool { true }
fn log(_: &FetchError, _: &backoff_runtime::RetryEvent) {}

#[retry(retry_if = is_transient, notify = log, max_elapsed_time = "1m", randomization_factor = 0.5)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
