// `jitter = NAME` names a `static` implementing `Jitterer`; a value of
// another type is one error, on the name.
use backoff_runtime::retry;

static SLOW: u32 = 5;

#[retry(exponential(base = "100ms"), jitter = SLOW)]
fn call() -> Result<(), ()> {
    Ok(())
}

fn main() {}
