// `stop_at_delay` that could never act, and `on_deadline` without a
// deadline or without time for its try. One error each, on the token.
use backoff_runtime::retry;

#[retry(exponential(base = "1s", max = "5s"), stop_at_delay = "10s")]
fn never_stops() -> Result<(), u32> { Err(1) }

#[retry(exponential(base = "1s", max = "1m"), stop_at_delay = "10s", attempts = 5)]
fn attempts_end_first() -> Result<(), u32> { Err(1) }

#[retry(constant("1s"), on_deadline = "last_try")]
fn no_deadline() -> Result<(), u32> { Err(1) }

#[retry(constant("1s"), max_elapsed = "10s", timeout = "10s", on_deadline = "last_try")]
async fn no_time_for_the_last_try() -> Result<(), u32> { Err(1) }

fn main() {}
