// A stage ends after `times` retries or once `for` has passed: given both,
// one error on `for`.
use backoff_runtime::retry;

#[retry(chain(constant("1s", times = 3, for = "3s"), constant("1m")), attempts = 6)]
fn call() -> Result<(), ()> {
    Ok(())
}

fn main() {}
