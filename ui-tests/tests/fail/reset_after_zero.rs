use backoff_runtime::retry;

#[retry(exponential(base = "1s"), reset_after = "0s")]
async fn session() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
