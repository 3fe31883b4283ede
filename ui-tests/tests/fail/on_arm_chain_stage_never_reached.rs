// A `chain` stage that an arm's `attempts` (or `throttled(..)`'s) never
// reaches: the error the top-level form gets, on the stage.
use backoff_runtime::{Decision, retry};

enum Failure {
    Transient,
    Permanent,
}

fn classify(_: &()) -> Failure {
    Failure::Transient
}

#[retry(when = classify,
        on(Failure::Transient, chain(constant("100ms", times = 5), constant("5s")), attempts = 3),
        on(Failure::Permanent, stop))]
fn arm() -> Result<(), ()> {
    Ok(())
}

fn throttled(_: &()) -> Decision {
    Decision::Throttled
}

#[retry(when = throttled, throttled(chain(immediate(times = 4), constant("1s")), attempts = 2))]
fn in_throttled() -> Result<(), ()> {
    Ok(())
}

fn main() {}
