use backoff_runtime::retry;

enum Failure {
    Transient,
}

#[retry(on(Failure::Transient, constant("1s"), attempts = 5))]
fn call() -> Result<(), Failure> {
    Ok(())
}

fn main() {}
