use backoff_runtime::retry;

fn nap(_: u64) {}

#[retry(sleep = nap)]
fn f() -> Result<(), ()> { Err(()) }

fn main() {}
