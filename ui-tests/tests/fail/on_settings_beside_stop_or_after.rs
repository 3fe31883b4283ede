use backoff_runtime::retry;
use std::time::Duration;

enum Failure {
    Transient,
    Permanent,
    RetryAfter(Duration),
}

fn classify(_: &()) -> Failure {
    Failure::Transient
}

#[retry(when = classify,
        on(Failure::Transient, constant("1s")),
        on(Failure::Permanent, stop, attempts = 3),
        on(Failure::RetryAfter(d), after = d))]
fn attempts_beside_stop() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify,
        on(Failure::Transient, constant("1s")),
        on(Failure::Permanent, stop),
        on(Failure::RetryAfter(d), after = d, jitter = "full"))]
fn jitter_beside_after() -> Result<(), ()> {
    Ok(())
}

fn main() {}
