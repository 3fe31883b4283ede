// `jitter = NAME` names a `static` implementing `Jitterer`; a value of
// another type (a number, the runtime's `Jitter`) is one error, on the
// name.
use backoff_runtime::{Jitter, retry};

static SLOW: u32 = 5;

#[retry(exponential(base = "100ms"), jitter = SLOW)]
fn call() -> Result<(), ()> {
    Ok(())
}

const HALF_AND_HALF: Jitter = Jitter::Equal;

#[retry(exponential(base = "100ms"), jitter = HALF_AND_HALF)]
fn runtime_jitter() -> Result<(), ()> {
    Ok(())
}

fn main() {}
