// An `extern "C" fn` returning `i32`, with the `tracing` feature on: one
// error, on the return type, naming none of the expansion's glue.
use backoff_runtime::retry;

#[retry(attempts = 2)]
pub extern "C" fn status(x: i32) -> i32 {
    x
}

#[retry(attempts = 2, fallback = |e, _| Err(e))]
pub fn lookup() -> Option<u32> {
    None
}

fn main() {}
