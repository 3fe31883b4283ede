use backoff_runtime::retry;

#[retry(exponential(base = "0ms"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
