// An async sleep on a plain fn: the message says the function is not async.
use backoff_runtime::retry;

#[retry(sleep = tokio::time::sleep)]
fn f() -> Result<(), ()> { Err(()) }

fn main() {}
