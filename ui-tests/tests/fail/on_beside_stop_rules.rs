// `stop_at_delay` beside `on(..)` applies to each arm when the code
// compiles: refused for an arm that draws its delays at random, for an arm
// it would stop before its first retry, and where it acts on no arm; a
// stop rule written inside an arm; `retry_after_max` with no `after` arm
// to bound; `after` beside an arm's strategy; a top-level `jitter` no
// arm takes.
use backoff_runtime::retry;
use std::time::Duration;

enum Failure {
    A,
    B,
    Later(Duration),
}

fn classify(_: &()) -> Failure {
    Failure::A
}

#[retry(when = classify, stop_at_delay = "2s",
        on(Failure::A, decorrelated(base = "100ms", max = "10s")),
        on(_, stop))]
fn random_arm() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify, stop_at_delay = "500ms",
        on(Failure::A, exponential(base = "100ms")),
        on(Failure::B, constant("1s")),
        on(_, stop))]
fn arm_stopped_before_its_first_retry() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify, stop_at_delay = "1s",
        on(Failure::A, exponential(base = "100ms"), attempts = 3),
        on(_, stop))]
fn never_acts() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify,
        on(Failure::A, exponential(base = "100ms"), stop_at_delay = "1s"),
        on(_, stop))]
fn stop_rule_inside_an_arm() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify, retry_after_max = "1m",
        on(Failure::A, exponential(base = "100ms")),
        on(_, stop))]
fn retry_after_max_without_after() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify,
        on(Failure::A, constant("1s"), after = Duration::from_secs(1)),
        on(Failure::Later(d), after = d),
        on(_, stop))]
fn after_beside_a_strategy() -> Result<(), ()> {
    Ok(())
}

#[retry(when = classify, jitter = "none",
        on(Failure::A, constant("1s"), jitter = "full"),
        on(Failure::Later(d), after = d),
        on(_, stop))]
fn jitter_for_no_arm() -> Result<(), ()> {
    Ok(())
}

fn main() {}
