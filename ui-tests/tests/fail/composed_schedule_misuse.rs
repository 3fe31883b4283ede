// Composed schedules: `times` where it belongs, every stage reachable,
// jitter once for the whole, no `decorrelated` under a combination, and
// Effect's combinator names pointed at ours. One error each, on the token.
use backoff_runtime::retry;

#[retry(chain(exponential(times = 3), constant("1m", times = 2)), attempts = 10)]
fn times_on_last() -> Result<(), u32> { Err(1) }

#[retry(chain(exponential, constant("1m")), attempts = 10)]
fn times_missing() -> Result<(), u32> { Err(1) }

#[retry(chain(exponential(times = 4), constant("1m")), attempts = 5)]
fn never_reached() -> Result<(), u32> { Err(1) }

#[retry(chain(exponential(times = 2, jitter = "full"), constant("1m")), attempts = 5)]
fn jitter_in_a_stage() -> Result<(), u32> { Err(1) }

#[retry(sum(constant("1s"), decorrelated))]
fn decorrelated_in_sum() -> Result<(), u32> { Err(1) }

#[retry(union(exponential, constant("1s")))]
fn effects_union() -> Result<(), u32> { Err(1) }

#[retry(intersect(exponential, constant("1s")))]
fn effects_intersect() -> Result<(), u32> { Err(1) }

#[retry(chain(and_then(immediate, immediate), constant("1s")))]
fn effects_and_then() -> Result<(), u32> { Err(1) }

#[retry(sum(exponential(times = 2), constant("1s")))]
fn times_outside_chain() -> Result<(), u32> { Err(1) }

fn main() {}
