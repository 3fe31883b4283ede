use backoff_runtime::retry;
use std::time::Duration;

async fn nap(_: Duration) -> u32 {
    0
}

#[retry(sleep = nap)]
async fn f() -> Result<(), ()> {
    Err(())
}

fn main() {}
