use backoff_runtime::retry;

fn classify(_: &()) -> bool { true }

#[retry(throttled(), when = classify)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
