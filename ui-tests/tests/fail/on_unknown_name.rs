use backoff_runtime::retry;

enum Failure {
    Transient,
    Permanent,
}

fn classify(_: &()) -> Failure {
    Failure::Transient
}

#[retry(when = classify,
        on(Failure::Transient, exponentail(base = "100ms")),
        on(Failure::Permanent, stop))]
fn misspelled_strategy() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify,
        on(Failure::Transient, constant("1s"), max_attempts = 4),
        on(Failure::Permanent, stop))]
fn unknown_setting() -> Result<(), ()> {
    Ok(())
}

fn main() {}
