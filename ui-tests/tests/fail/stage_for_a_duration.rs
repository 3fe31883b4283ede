// A stage that ends by time (`for = D`) is not built yet: one error on
// `for`, naming what to write instead.
use backoff_runtime::retry;

#[retry(chain(constant("1s", for = "3s"), constant("1m")), attempts = 6)]
fn call() -> Result<(), ()> {
    Ok(())
}

fn main() {}
