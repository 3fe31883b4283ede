use backoff_runtime::retry;

#[retry(attempts = 99999999999999999999999)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
