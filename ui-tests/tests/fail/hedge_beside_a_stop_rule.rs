// `hedge` starts its attempts on its own clock: a stop rule in the
// schedule's terms has no sleep to act on.
#[backoff_runtime::retry(hedge = "50ms", attempts = 3, stop_at_delay = "1s")]
async fn stop_at_delay() -> Result<(), std::io::Error> {
    Ok(())
}

#[backoff_runtime::retry(hedge = "50ms", attempts = 3, on_deadline = "last_try")]
async fn on_deadline() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
