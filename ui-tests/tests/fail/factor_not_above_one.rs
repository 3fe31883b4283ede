use backoff_runtime::retry;

#[retry(exponential(factor = 1))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
