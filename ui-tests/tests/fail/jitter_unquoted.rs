use backoff_runtime::retry;

#[retry(jitter = full)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
