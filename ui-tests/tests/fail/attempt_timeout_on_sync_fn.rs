use backoff_runtime::retry;

#[retry(attempt_timeout = "5s")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
