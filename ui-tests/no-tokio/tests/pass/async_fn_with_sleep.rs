use backoff_runtime::retry;
use std::time::Duration;

async fn nap(_: Duration) {}

#[retry(sleep = nap)]
async fn fetch() -> Result<(), ()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
