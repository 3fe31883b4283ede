use backoff_runtime::retry;

// `#[tokio::test]` runs first and makes the function a plain fn that
// blocks on its body: `#[retry]` belongs above it.
#[tokio::test]
#[retry(timeout = "1s")]
async fn fetches() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
