use backoff_runtime::retry;

#[retry(exponential(base = 100))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
