use backoff_runtime::{retry, SuccessEvent};

fn log_page(page: &String, _: &SuccessEvent) {
    println!("{page}");
}

// The hook takes the `Ok` value's type, `&u32` here.
#[retry(attempts = 3, on_success = log_page)]
fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

#[retry(attempts = 3, on_success = |v: &str, _e| println!("{v}"))]
async fn fetch_async() -> Result<u32, std::io::Error> {
    Ok(1)
}

// The same under `hedge`, whose hook runs after the hedged call.
#[retry(hedge = "20ms", attempts = 2, on_success = log_page)]
async fn fetch_hedged() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
