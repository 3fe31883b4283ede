// Not a `Result`, with the `tracing` feature on: one error, on the return
// type (the trace of each retry and of giving up adds none).
use backoff_runtime::retry;

#[retry(when = |e| { let _ = e; true })]
async fn compact() -> Option<u32> { Some(1) }

#[retry(when = |e| { let _ = e; true }, on_retry = |e, _| { let _ = e; })]
async fn own_loop() -> Option<u32> { Some(1) }

#[retry(fallback = |e, _| Err(e))]
fn with_fallback() -> Option<u32> { Some(1) }

fn main() {}
