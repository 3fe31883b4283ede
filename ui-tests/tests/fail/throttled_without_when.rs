use backoff_runtime::retry;

#[retry(throttled(exponential(base = "500ms", max = "30s"), attempts = 10))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
