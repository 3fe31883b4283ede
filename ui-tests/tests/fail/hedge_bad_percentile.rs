use backoff_runtime::retry;

#[retry(hedge = "p100", attempts = 3)]
async fn a() -> Result<(), std::io::Error> { Ok(()) }

#[retry(hedge = "p9x", attempts = 3)]
async fn b() -> Result<(), std::io::Error> { Ok(()) }

#[retry(hedge = "20 ms", attempts = 3)]
async fn c() -> Result<(), std::io::Error> { Ok(()) }

fn main() {}
