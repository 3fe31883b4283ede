use backoff_runtime::{Decision, retry};

enum Failure {
    Transient,
    Permanent,
}

fn is_transient(_: &()) -> bool {
    true
}

fn decide(_: &()) -> Decision {
    Decision::Retry
}

#[retry(when = is_transient,
        on(Failure::Transient, constant("1s")),
        on(Failure::Permanent, stop))]
fn with_bool() -> Result<(), ()> {
    Ok(())
}

#[retry(when = decide,
        on(Failure::Transient, constant("1s")),
        on(Failure::Permanent, stop))]
fn with_decision() -> Result<(), ()> {
    Ok(())
}

fn main() {}
