use backoff_runtime::retry;

#[retry(clone(reqest))]
fn send(request: String, retries: u32) -> Result<(), String> {
    Err(request + &retries.to_string())
}

#[retry(clone(body))]
fn post(url: &str) -> Result<(), String> {
    Err(url.to_owned())
}

fn main() {}
