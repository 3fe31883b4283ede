use backoff_runtime::{retry, Policy};
use std::time::Duration;

static POLICY: Policy = Policy::constant(Duration::from_secs(1));

#[retry(policy = &POLICY, reset_after = "1m")]
fn session() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
