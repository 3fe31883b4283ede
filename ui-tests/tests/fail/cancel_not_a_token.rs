use backoff_runtime::retry;
use std::sync::atomic::AtomicBool;

#[retry(attempts = 3, cancel = stop)]
fn f(stop: &AtomicBool) -> std::io::Result<()> { Ok(()) }

#[retry(attempts = 3, cancel = stop)]
async fn g(stop: &AtomicBool) -> std::io::Result<()> { Ok(()) }

#[retry(hedge = "10ms", attempts = 2, cancel = stop)]
async fn h(stop: &AtomicBool) -> std::io::Result<()> { Ok(()) }

fn main() {}
