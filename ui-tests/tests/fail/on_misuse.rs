// `on(..)` beside what it cannot be combined with, an arm without a
// schedule, a composed arm's own mistake, more attempts than a kind
// counts, two `decorrelated` arms, and too many arms.
use backoff_runtime::retry;

enum Failure {
    A,
    B,
}

fn classify(_: &()) -> Failure {
    Failure::A
}

#[retry(exponential(base = "1s"), when = classify, on(Failure::A, constant("1s")), on(Failure::B, stop))]
fn top_level_strategy() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify, on(Failure::A), on(Failure::B, stop))]
fn no_schedule() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify, on(Failure::A, decorrelated, jitter = "full"), on(Failure::B, stop))]
fn jitter_with_decorrelated() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify, on(Failure::A, chain(immediate, constant("1s"))), on(Failure::B, stop))]
fn composed_arm_without_times() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify, on(Failure::A, immediate, attempts = 1000), on(Failure::B, stop))]
fn too_many_attempts() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify, on(Failure::A, decorrelated), on(Failure::B, decorrelated(base = "1s")))]
fn two_decorrelated_arms() -> Result<(), ()> {
    Ok(())
}

enum Nine {
    A,
    B,
    C,
    D,
    E,
    F,
    G,
    H,
    I,
}

fn nine(_: &()) -> Nine {
    Nine::A
}

#[retry(when = nine,
        on(Nine::A, immediate), on(Nine::B, stop), on(Nine::C, stop),
        on(Nine::D, stop), on(Nine::E, stop), on(Nine::F, stop),
        on(Nine::G, stop), on(Nine::H, stop), on(Nine::I, stop))]
fn nine_arms() -> Result<(), ()> {
    Ok(())
}

fn main() {}
