use backoff_runtime::retry;

#[retry(jitter = "ful")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
