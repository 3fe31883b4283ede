use backoff_runtime::retry;

#[retry(exponential(max = "50ms"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
