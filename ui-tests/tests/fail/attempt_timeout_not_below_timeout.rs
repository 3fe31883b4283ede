use backoff_runtime::retry;

// An attempt can never run longer than the whole call: this
// `attempt_timeout` would never act.
#[retry(timeout = "1s", attempt_timeout = "5s")]
async fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
