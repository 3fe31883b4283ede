use backoff_runtime::retry;

fn nap(_: std::time::Duration) {}

#[retry(sleep = nap)]
async fn f() -> Result<(), ()> { Err(()) }

fn main() {}
