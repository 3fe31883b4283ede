use backoff_runtime::retry;

fn classify(_: &()) -> bool { true }

#[retry(throttled(exponential(base = "0ms", factor = 1), attempts = 0), when = classify)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
