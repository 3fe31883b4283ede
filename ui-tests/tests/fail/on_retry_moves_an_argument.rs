use backoff_runtime::{RetryEvent, retry};

fn report(_: String) {}

// The closure moves `message` out: it could run once, and `on_retry` runs
// before each retry.
#[retry(immediate, on_retry = |_: &u32, _: &RetryEvent| report(message))]
fn send(message: String) -> Result<(), u32> {
    Err(message.len() as u32)
}

fn main() {}
