use backoff_runtime::retry;

#[retry(exponential(bse = "1s"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
