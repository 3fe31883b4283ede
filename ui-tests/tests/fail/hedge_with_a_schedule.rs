use backoff_runtime::retry;

#[retry(exponential(base = "100ms"), hedge = "20ms", attempts = 3, jitter = "full", max_elapsed = "1s")]
async fn fetch() -> Result<(), std::io::Error> { Ok(()) }

fn main() {}
