use backoff_runtime::retry;

#[retry]
fn send(message: String) -> Result<(), String> {
    Err(message)
}

fn main() {}
