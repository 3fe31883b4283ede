use backoff_runtime::retry;

// `#[tracing::instrument]` runs first and moves `name` into its future on
// the first attempt.
#[tracing::instrument]
#[retry(immediate, attempts = 3)]
async fn greet(name: String, times: u32) -> Result<String, u32> {
    if times > 1 { Err(times) } else { Ok(name) }
}

fn main() {}
