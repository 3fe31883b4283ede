use backoff_runtime::retry;

enum Failure {
    Transient,
}

fn classify(_: &()) -> Failure {
    Failure::Transient
}

#[retry(when = classify,
        throttled(exponential(base = "500ms", max = "30s"), attempts = 10),
        on(Failure::Transient, constant("1s"), attempts = 5))]
fn call() -> Result<(), ()> {
    Ok(())
}

fn main() {}
