use backoff_runtime::retry;

#[retry(attempts = 4294967296)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
