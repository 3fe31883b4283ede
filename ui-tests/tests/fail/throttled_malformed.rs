use backoff_runtime::retry;

fn classify(_: &()) -> bool { true }

#[retry(throttled(exponential(base = "500ms"), tries = 10), when = classify)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
