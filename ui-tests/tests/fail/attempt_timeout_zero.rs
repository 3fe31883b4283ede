use backoff_runtime::retry;

#[retry(attempt_timeout = "0s")]
async fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
