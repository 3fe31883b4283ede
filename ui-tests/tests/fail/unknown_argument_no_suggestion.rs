use backoff_runtime::retry;

#[retry(retries = 3)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
