use backoff_runtime::{retry, CancelToken};

#[retry(attempts = 3, cancel = token, sleep = std::thread::sleep)]
fn f(token: &CancelToken) -> std::io::Result<()> { Ok(()) }

fn main() {}
