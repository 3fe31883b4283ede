// Beside `when_ok`, `on_retry` sees the whole outcome: a function of the
// error alone is told so.
use backoff_runtime::{retry, RetryEvent};

fn log(_: &String, _: &RetryEvent) {}

#[retry(when_ok = |v| *v == 503, on_retry = log)]
fn f() -> Result<u16, String> { Ok(200) }

fn main() {}
