use backoff_runtime::retry;

#[retry(jitter = scattered(1.5))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
