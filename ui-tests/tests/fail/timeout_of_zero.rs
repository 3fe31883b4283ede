use backoff_runtime::retry;

#[retry(timeout = "0s")]
async fn f() -> Result<(), std::io::Error> { Ok(()) }

fn main() {}
