use backoff_runtime::retry;

#[retry(hedge = "20ms", attempts = 3)]
fn fetch(url: &str) -> Result<String, std::io::Error> {
    Ok(url.to_owned())
}

fn main() {}
