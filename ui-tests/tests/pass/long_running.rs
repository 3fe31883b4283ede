// `reset_after`, `on_success` and the time left (`context.remaining`,
// `deadline()`), in a plain fn and an `async fn`, beside `on_retry`,
// `max_elapsed` and `timeout`: they compile and run.
use backoff_runtime::{retry, RetryEvent, SuccessEvent};
use std::cell::Cell;

thread_local! {
    static TOLD: Cell<u32> = const { Cell::new(0) };
}

fn told(_: &u32, event: &SuccessEvent) {
    TOLD.with(|t| t.set(event.attempts));
}

#[retry(immediate, attempts = 3, max_elapsed = "10s", reset_after = "1m", context = ctx, on_success = told)]
fn session() -> Result<u32, std::io::Error> {
    assert!(ctx.remaining.is_some() && ctx.deadline().is_some());
    if ctx.attempt < 2 {
        return Err(std::io::Error::other("dropped"));
    }
    Ok(ctx.attempt)
}

#[retry(immediate, attempts = 3, timeout = "10s", attempt_timeout = "1s", context = ctx,
        on_retry = |_e, ev: &RetryEvent| assert!(ev.remaining.is_some() && ev.run == 1),
        on_success = |v, e| assert_eq!(*v, e.attempts))]
async fn stream() -> Result<u32, std::io::Error> {
    if ctx.attempt < 2 {
        return Err(std::io::Error::other("dropped"));
    }
    Ok(ctx.attempt)
}

fn main() {
    assert_eq!(session().unwrap(), 2);
    assert_eq!(TOLD.with(Cell::get), 2);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    assert_eq!(runtime.block_on(stream()).unwrap(), 2);
}
