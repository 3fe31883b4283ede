use backoff_runtime::retry;

#[retry(exponential(base = "1s", base = "2s"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
