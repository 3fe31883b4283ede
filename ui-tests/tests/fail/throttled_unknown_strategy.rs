use backoff_runtime::retry;

fn classify(_: &()) -> bool { true }

#[retry(throttled(exponentail(base = "500ms"), attempts = 10), when = classify)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
