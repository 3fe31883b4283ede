// `attempt_timeout` and `timeout` need tokio's timer even when the function
// names its own sleep: one error each, on the argument's name.
use backoff_runtime::retry;

async fn nap(_: std::time::Duration) {}

#[retry(attempt_timeout = "1s", sleep = nap)]
async fn fetch() -> Result<(), std::io::Error> {
    Ok(())
}

#[retry(timeout = "10s", sleep = nap)]
async fn fetch_all() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {
    let _ = fetch();
    let _ = fetch_all();
}
