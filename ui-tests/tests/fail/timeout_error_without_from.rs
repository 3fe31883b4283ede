use backoff_runtime::retry;

#[derive(Debug)]
struct Error;

#[retry(timeout = "10s")]
async fn f() -> Result<(), Error> { Ok(()) }

fn main() {}
