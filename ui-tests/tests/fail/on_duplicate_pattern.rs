use backoff_runtime::retry;

enum Failure {
    Transient,
    Permanent,
}

fn classify(_: &()) -> Failure {
    Failure::Transient
}

#[retry(when = classify,
        on(Failure::Transient, constant("1s")),
        on(Failure::Permanent, stop),
        on(Failure::Transient, immediate, attempts = 9))]
fn call() -> Result<(), ()> {
    Ok(())
}

fn main() {}
