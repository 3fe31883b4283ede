use backoff_runtime::retry;

#[retry(attempts = 3)]
#[retry(attempts = 5)]
fn fetch() -> Result<u32, u32> {
    Ok(1)
}

#[retry(attempts = 3)]
#[backoff_runtime::retry]
fn fetch_path() -> Result<u32, u32> {
    Ok(1)
}

fn main() {}
