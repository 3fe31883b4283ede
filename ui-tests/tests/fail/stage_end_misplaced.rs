// `for` and `times` end a stage of `chain`, or a side of `shorter` and
// `longer`: anywhere else each is an error on its name, with the fix.
use backoff_runtime::retry;

// The whole call's time limit is `max_elapsed`.
#[retry(exponential(base = "1s", for = "3s"))]
fn top_level() -> Result<(), ()> {
    Ok(())
}

// Every stage of `sum` applies to every retry.
#[retry(sum(constant("1s", for = "3s"), exponential))]
fn in_sum() -> Result<(), ()> {
    Ok(())
}

// A stage of zero time never runs.
#[retry(chain(constant("1s", for = "0s"), constant("1m")))]
fn for_nothing() -> Result<(), ()> {
    Ok(())
}

enum Failure {
    Busy,
}

fn classify(_: &()) -> Failure {
    Failure::Busy
}

// An `on(..)` arm's retries end with its `attempts`.
#[retry(when = classify, on(Failure::Busy, chain(constant("1s", for = "3s"), constant("1m")), attempts = 5))]
fn in_an_arm() -> Result<(), ()> {
    Ok(())
}

fn main() {}
