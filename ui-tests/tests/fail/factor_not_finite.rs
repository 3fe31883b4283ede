use backoff_runtime::retry;

#[retry(exponential(factor = 1e400))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
