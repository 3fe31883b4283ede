use backoff_runtime::retry;

#[retry(timeout = "30s")]
fn f() -> Result<(), std::io::Error> { Ok(()) }

fn main() {}
