use backoff_runtime::retry;

#[retry(exponential("100ms"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
