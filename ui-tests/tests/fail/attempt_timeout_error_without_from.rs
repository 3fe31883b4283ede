use backoff_runtime::retry;

#[derive(Debug)]
struct Error;

#[retry(attempt_timeout = "5s")]
async fn f() -> Result<(), Error> { Ok(()) }

fn main() {}
