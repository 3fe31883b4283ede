// A call keeps at most 4 stage boundaries placed by time: a schedule with
// more is one error on it, naming the fix.
use backoff_runtime::retry;

#[retry(chain(
    constant("1s", for = "2s"),
    constant("2s", for = "4s"),
    constant("3s", for = "6s"),
    constant("4s", for = "8s"),
    constant("5s", for = "10s"),
    constant("1m")
))]
fn call() -> Result<(), ()> {
    Ok(())
}

// Four fit.
#[retry(chain(
    constant("1s", times = 2),
    constant("2s", for = "4s"),
    constant("3s", times = 3),
    constant("4s", for = "8s"),
    constant("1m")
), attempts = 10)]
fn fits() -> Result<(), ()> {
    Ok(())
}

fn main() {}
