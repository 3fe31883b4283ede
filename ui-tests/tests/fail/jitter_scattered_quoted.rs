use backoff_runtime::retry;

#[retry(jitter = "scattered(0.2)")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
