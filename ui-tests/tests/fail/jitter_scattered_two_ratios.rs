use backoff_runtime::retry;

#[retry(jitter = scattered(0.5, 1))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
