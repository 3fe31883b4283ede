use backoff_runtime::retry;

#[retry(attempts = 0)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
