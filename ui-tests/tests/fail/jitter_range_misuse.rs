// `jitter = range(lo, hi)`: 0 ≤ lo ≤ hi, both finite. One error each.
use backoff_runtime::retry;

#[retry(jitter = range(1.5, 0.5))]
fn reversed() -> Result<(), u32> { Err(1) }

#[retry(jitter = range(-0.5, 1))]
fn negative() -> Result<(), u32> { Err(1) }

#[retry(jitter = range(0, 1e999))]
fn infinite() -> Result<(), u32> { Err(1) }

fn main() {}
