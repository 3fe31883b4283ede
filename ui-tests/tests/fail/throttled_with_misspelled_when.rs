// A misspelled `when` beside `throttled` is one error (the typo), not a second "add a `when`".
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

fn classify(_: &FetchError) -> backoff_runtime::Decision { backoff_runtime::Decision::Throttled }

#[retry(wen = classify, throttled(exponential(base = "500ms", max = "30s"), attempts = 10))]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
