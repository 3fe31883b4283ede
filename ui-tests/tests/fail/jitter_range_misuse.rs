// `jitter = range(lo, hi)`: 0 ≤ lo ≤ hi, both finite and within `f32`.
// One error each.
use backoff_runtime::retry;

#[retry(jitter = range(1.5, 0.5))]
fn reversed() -> Result<(), u32> { Err(1) }

#[retry(jitter = range(-0.5, 1))]
fn negative() -> Result<(), u32> { Err(1) }

#[retry(jitter = range(0, 1e999))]
fn infinite() -> Result<(), u32> { Err(1) }

// Finite, but beyond what the runtime's `f32` bounds hold (the attribute
// panicked on it before, found by the expansion fuzzer).
#[retry(jitter = range(0, 1e99))]
fn too_large() -> Result<(), u32> { Err(1) }

// `-0` is zero: this compiles.
#[retry(jitter = range(-0, 1))]
fn negative_zero() -> Result<(), u32> { Err(1) }

fn main() {}
