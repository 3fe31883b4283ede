use backoff_runtime::retry;

#[retry(exponential(factor = "2"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
