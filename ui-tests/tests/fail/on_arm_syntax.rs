// An arm's syntax: an `if` guard, nothing in the parentheses, a bad
// `attempts`, and one from a `const` (neither told to use `policy`,
// which `on(..)` refuses).
use backoff_runtime::retry;

enum Failure {
    Transient(u16),
    Permanent,
}

fn classify(_: &()) -> Failure {
    Failure::Permanent
}

#[retry(when = classify,
        on(Failure::Transient(code) if code > 500, constant("1s")),
        on(_, stop))]
fn guard() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify, on(), on(_, stop))]
fn empty() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify, on(Failure::Permanent, constant("1s"), attempts = "five"), on(_, stop))]
fn bad_attempts() -> Result<(), ()> {
    Ok(())
}

const LIMIT: u64 = 4;

#[retry(when = classify, on(Failure::Permanent, constant("1s"), attempts = LIMIT), on(_, stop))]
fn attempts_from_a_const() -> Result<(), ()> {
    Ok(())
}

fn main() {}
