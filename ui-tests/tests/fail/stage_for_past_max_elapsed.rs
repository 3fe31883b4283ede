// A `for` no shorter than `max_elapsed` could never end its stage: the
// deadline ends the call first. One error on the duration.
use backoff_runtime::retry;

#[retry(chain(constant("1s", for = "30s"), constant("1m")), max_elapsed = "20s")]
fn call() -> Result<(), ()> {
    Ok(())
}

#[retry(shorter(constant("1s", for = "20s"), constant("5s")), max_elapsed = "20s")]
fn side() -> Result<(), ()> {
    Ok(())
}

fn main() {}
