// A pattern of another type among the arms: one error, on that pattern.
use backoff_runtime::{Decision, retry};

enum Failure {
    Transient,
    Permanent,
}

fn classify(_: &()) -> Failure {
    Failure::Transient
}

#[retry(when = classify,
        on(Failure::Transient, constant("1s")),
        on(Decision::Retry, immediate),
        on(Failure::Permanent, stop))]
fn call() -> Result<(), ()> {
    Ok(())
}

fn main() {}
