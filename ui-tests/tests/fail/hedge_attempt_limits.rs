use backoff_runtime::retry;

#[retry(hedge = "20ms", attempts = unlimited)]
async fn unlimited() -> Result<(), std::io::Error> { Ok(()) }

#[retry(hedge = "20ms", attempts = 1)]
async fn one() -> Result<(), std::io::Error> { Ok(()) }

#[retry(hedge = "p95", attempts = 20)]
async fn twenty() -> Result<(), std::io::Error> { Ok(()) }

fn main() {}
