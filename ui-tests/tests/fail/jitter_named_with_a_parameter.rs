use backoff_runtime::retry;

#[retry(jitter = spread(0.5))]
fn a() -> Result<u32, std::io::Error> {
    Ok(1)
}

#[retry(jitter = full(1.0))]
fn b() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
