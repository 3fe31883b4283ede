// A variant added to the classification after the arms were written
// (`Conflict`): the match `on(..)` expands to has no wildcard arm, so the
// variant without an arm is a compile error at `when` that names it.
use backoff_runtime::retry;

enum Failure {
    Transient,
    Throttled,
    Permanent,
    Conflict,
}

struct ApiError;

fn classify(_: &ApiError) -> Failure {
    Failure::Transient
}

#[retry(when = classify,
        on(Failure::Transient, exponential(base = "100ms", max = "5s"), attempts = 5),
        on(Failure::Throttled, exponential(base = "500ms", max = "30s"), attempts = 10),
        on(Failure::Permanent, stop))]
async fn call() -> Result<(), ApiError> {
    Ok(())
}

fn main() {}
