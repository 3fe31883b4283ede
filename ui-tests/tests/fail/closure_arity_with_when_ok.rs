// With `when_ok`, `on_retry` receives the whole outcome: the arity message says so.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(when_ok = |v, w| { let _ = (v, w); false }, on_retry = |outcome| { let _ = outcome; })]
fn f() -> Result<u32, FetchError> { Ok(1) }

fn main() {}
