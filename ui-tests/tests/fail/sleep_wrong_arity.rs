// A sleep of two parameters.
use backoff_runtime::retry;

fn nap(_: std::time::Duration, _jitter: bool) {}

#[retry(sleep = nap)]
fn f() -> Result<(), ()> { Err(()) }

fn main() {}
