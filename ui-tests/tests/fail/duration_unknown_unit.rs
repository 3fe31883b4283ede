use backoff_runtime::retry;

#[retry(exponential(base = "10 parsecs"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
