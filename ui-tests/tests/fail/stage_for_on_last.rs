// The last stage of `chain` runs until the call ends: a `for` there is an
// error on `for`.
use backoff_runtime::retry;

#[retry(chain(constant("1s", for = "3s"), constant("1m", for = "1m")), attempts = 6)]
fn call() -> Result<(), ()> {
    Ok(())
}

fn main() {}
