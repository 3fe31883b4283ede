use backoff_runtime::retry;

#[retry(decorrelated(base = "10ms"), jitter = "full")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
