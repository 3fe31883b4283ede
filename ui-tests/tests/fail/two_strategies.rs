use backoff_runtime::retry;

#[retry(exponential, linear(base = "1s"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
