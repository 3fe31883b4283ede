use backoff_runtime::retry;

#[retry(jitter = 5)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
