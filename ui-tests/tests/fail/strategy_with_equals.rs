use backoff_runtime::retry;

#[retry(exponential = "1s")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
