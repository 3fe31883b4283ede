// A `when` that names a constant, not a function.
use backoff_runtime::retry;

const RETRY: bool = true;

#[retry(when = RETRY)]
fn f() -> Result<(), u32> { Err(1) }

fn main() {}
