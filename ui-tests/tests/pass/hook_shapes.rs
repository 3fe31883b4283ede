// The values `when`, `when_ok`, `on_retry`, `on_giveup` and `sleep` take in
// every shape the loop's checks must accept, and the hooks run: a generic
// function, a method, a function pointer, a closure whose body needs its
// parameter's type (given directly and through a `macro_rules!` fragment),
// closures with some parameters typed, typed `_` or destructured, a
// capturing `FnMut`, and an `FnOnce` that moves what it captured.
use backoff_runtime::{retry, Decision, GiveUp, RetryEvent};
use std::cell::Cell;
use std::fmt::Debug;
use std::time::Duration;

#[derive(Debug)]
pub struct FetchError {
    transient: bool,
}

impl FetchError {
    fn is_transient(&self) -> bool {
        self.transient
    }
}

fn transient() -> Result<u32, FetchError> {
    Err(FetchError { transient: true })
}

fn generic<E: Debug>(e: &E) -> bool {
    !format!("{e:?}").is_empty()
}

const CLASSIFY: fn(&FetchError) -> bool = FetchError::is_transient;

fn nap(_: Duration) {}

#[retry(attempts = 2, jitter = "none", sleep = nap, when = generic)]
fn by_generic_fn() -> Result<u32, FetchError> {
    transient()
}

#[retry(attempts = 2, jitter = "none", sleep = nap, when = FetchError::is_transient)]
fn by_method() -> Result<u32, FetchError> {
    transient()
}

#[retry(attempts = 2, jitter = "none", sleep = nap, when = CLASSIFY)]
fn by_fn_pointer() -> Result<u32, FetchError> {
    transient()
}

macro_rules! with_when {
    ($name:ident, $when:expr) => {
        #[retry(attempts = 2, jitter = "none", sleep = nap, when = $when)]
        fn $name() -> Result<u32, FetchError> {
            transient()
        }
    };
}

with_when!(by_forwarded_closure, |e| e.is_transient());

#[retry(attempts = 2, jitter = "none", sleep = nap, when = |&FetchError { transient }| transient)]
fn by_destructuring_closure() -> Result<u32, FetchError> {
    transient()
}

#[retry(attempts = 2, jitter = "none", sleep = nap, when = |e: &_| e.is_transient(), on_retry = |_: _, _: &_| ())]
fn by_closure_typed_with_underscores() -> Result<u32, FetchError> {
    transient()
}

#[retry(
    attempts = 3,
    jitter = "none",
    sleep = nap,
    when = |e| if e.is_transient() { Decision::Retry } else { Decision::Stop },
    on_retry = |e, event: &RetryEvent| retries.set(retries.get() + u32::from(e.is_transient() && event.attempt > 0)),
    on_giveup = move |outcome, report: &GiveUp| {
        let owned: Vec<u32> = owned;
        gave_up.set(outcome.is_err() && report.attempts == 3 && owned.len() == 1);
    }
)]
fn counted(retries: &Cell<u32>, gave_up: &Cell<bool>, owned: Vec<u32>) -> Result<u32, FetchError> {
    transient()
}

#[retry(
    attempts = 2,
    jitter = "none",
    sleep = nap,
    when_ok = |n| *n < 10,
    on_retry = |outcome, _| assert!(matches!(outcome, Ok(1))),
    on_giveup = |outcome: &Result<u32, FetchError>, _| assert!(matches!(outcome, Ok(1)))
)]
fn by_value() -> Result<u32, FetchError> {
    Ok(1)
}

fn main() {
    assert!(by_generic_fn().is_err());
    assert!(by_method().is_err());
    assert!(by_fn_pointer().is_err());
    assert!(by_forwarded_closure().is_err());
    assert!(by_destructuring_closure().is_err());
    assert!(by_closure_typed_with_underscores().is_err());
    let (retries, gave_up) = (Cell::new(0), Cell::new(false));
    assert!(counted(&retries, &gave_up, vec![1]).is_err());
    assert_eq!(retries.get(), 2);
    assert!(gave_up.get());
    assert!(matches!(by_value(), Ok(1)));
}
