use backoff_runtime::retry;

#[retry(jitter = loud)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
