// Another crate's error type with `attempt_timeout`: no impl the orphan rule
// forbids is suggested; the note points to the wrapper enum.
use backoff_runtime::retry;

#[retry(attempt_timeout = "5s")]
async fn f() -> Result<(), std::fmt::Error> { Ok(()) }

fn main() {}
