// `sidekiq` and `buckets` take `unit` and `max`; a zero unit never waits,
// as `throttled`'s schedule too. One error each, on the token.
use backoff_runtime::{retry, Decision};

#[retry(sidekiq(base = "1s"))]
fn wrong_parameter() -> Result<(), u32> { Err(1) }

#[retry(buckets(unit = "0s"))]
fn zero_unit() -> Result<(), u32> { Err(1) }

fn classify(_: &u32) -> Decision { Decision::Throttled }

#[retry(when = classify, throttled(buckets(unit = "0s"), attempts = 3))]
fn throttled_sidekiq() -> Result<(), u32> { Err(1) }

fn main() {}
