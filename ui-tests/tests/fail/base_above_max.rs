use backoff_runtime::retry;

#[retry(exponential(base = "2s", max = "1s"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
