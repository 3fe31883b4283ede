// An `async fn` that returns no `Result`, with hooks whose closures the loop
// types from the `Result`: still one error, on the return type.
use backoff_runtime::retry;

#[retry(when = |e| { let _ = e; true }, on_retry = |e, _| { let _ = e; }, on_giveup = |outcome, _| { let _ = outcome; })]
async fn f() -> Option<u32> { Some(1) }

fn main() {}
