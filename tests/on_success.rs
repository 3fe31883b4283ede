//! `on_success`: once, when the call returns an `Ok` it accepted, with the
//! attempts and the time it took; never on a give-up (nor for a fallback's
//! value). Through the attribute and without it, on tokio's paused clock.

use std::sync::Mutex;
use std::time::Duration;

use backoff_runtime::{Elapsed, Jitter, Policy, SuccessEvent, retry};
use tokio::time::sleep;

const SECS: fn(u64) -> Duration = Duration::from_secs;

#[derive(Debug, PartialEq)]
enum Fail {
    Down,
    TimedOut,
}

impl From<Elapsed> for Fail {
    fn from(_: Elapsed) -> Self {
        Fail::TimedOut
    }
}

type Told = Mutex<Vec<(u32, u32, Duration)>>;

/// Two failures, then a success: told once, with the value, 3 attempts,
/// and the 1 s + 2 s of sleeps plus the attempts' 500 ms each.
#[tokio::test(start_paused = true)]
async fn told_once_with_the_attempts_and_the_time() {
    static TOLD: Told = Mutex::new(Vec::new());

    #[retry(exponential(base = "1s"), jitter = "none", attempts = 5, context = ctx, on_success = |value, event| TOLD.lock().unwrap().push((*value, event.attempts, event.elapsed)))]
    async fn call() -> Result<u32, Fail> {
        sleep(Duration::from_millis(500)).await;
        if ctx.attempt < 3 {
            Err(Fail::Down)
        } else {
            Ok(ctx.attempt * 10)
        }
    }

    assert_eq!(call().await, Ok(30));
    assert_eq!(
        *TOLD.lock().unwrap(),
        [(30, 3, SECS(1) + SECS(2) + Duration::from_millis(1_500))]
    );
}

/// `when_ok` rejects the first `Ok`s: the one it accepts is told; a call
/// that gives up with an `Ok` it rejected is not, nor one whose `fallback`
/// gives a value, nor one its `timeout` ends.
#[tokio::test(start_paused = true)]
async fn never_on_a_give_up() {
    static TOLD: Told = Mutex::new(Vec::new());
    static LAST: Mutex<u32> = Mutex::new(3);

    #[retry(constant("1s"), jitter = "none", attempts = 3, context = ctx, when_ok = |v: &u32| *v < *LAST.lock().unwrap(), on_success = |v, e| TOLD.lock().unwrap().push((*v, e.attempts, e.elapsed)))]
    async fn polled() -> Result<u32, Fail> {
        Ok(ctx.attempt)
    }

    assert_eq!(polled().await, Ok(3));
    assert_eq!(*TOLD.lock().unwrap(), [(3, 3, SECS(2))]);
    // Every `Ok` rejected: the call gives up with the last one, untold.
    *LAST.lock().unwrap() = 10;
    assert_eq!(polled().await, Ok(3));
    assert_eq!(TOLD.lock().unwrap().len(), 1);

    #[retry(immediate, attempts = 2, fallback = |_e, _g| Ok(7), on_success = |v: &u32, e: &SuccessEvent| TOLD.lock().unwrap().push((*v, e.attempts, e.elapsed)))]
    async fn falls_back() -> Result<u32, Fail> {
        Err(Fail::Down)
    }
    assert_eq!(falls_back().await, Ok(7));
    assert_eq!(TOLD.lock().unwrap().len(), 1);

    #[retry(constant("1s"), jitter = "none", attempts = 5, timeout = "1500ms", on_success = |v, e| TOLD.lock().unwrap().push((*v, e.attempts, e.elapsed)))]
    async fn slow() -> Result<u32, Fail> {
        sleep(SECS(1)).await;
        Err(Fail::Down)
    }
    assert_eq!(slow().await, Err(Fail::TimedOut));
    assert_eq!(TOLD.lock().unwrap().len(), 1);
}

/// A plain fn (its loop the function's own) and a path to a function.
#[test]
fn a_plain_fn_and_a_path() {
    #[derive(Debug, PartialEq)]
    struct Page(&'static str);
    static TOLD: Mutex<Vec<(&'static str, u32)>> = Mutex::new(Vec::new());
    fn log_success(page: &Page, event: &SuccessEvent) {
        TOLD.lock().unwrap().push((page.0, event.attempts));
    }

    #[retry(immediate, attempts = 3, context = ctx, on_success = log_success)]
    fn call() -> Result<Page, Fail> {
        if ctx.attempt < 2 {
            Err(Fail::Down)
        } else {
            Ok(Page("up"))
        }
    }

    assert_eq!(call(), Ok(Page("up")));
    assert_eq!(*TOLD.lock().unwrap(), [("up", 2)]);
}

/// Without the attribute: `Retrying::on_success`, blocking and async.
#[tokio::test(start_paused = true)]
async fn without_the_attribute() {
    let policy = Policy::constant(SECS(1)).jitter(Jitter::None).attempts(4);
    let mut told = Vec::new();
    let mut calls = 0;
    let result: Result<u32, Fail> = policy
        .retrying_async(async || {
            calls += 1;
            if calls < 3 {
                Err(Fail::Down)
            } else {
                Ok(calls)
            }
        })
        .on_success(|v: &u32, e: &SuccessEvent| told.push((*v, e.attempts, e.elapsed)))
        .call_async()
        .await;
    assert_eq!(result, Ok(3));
    assert_eq!(told, [(3, 3, SECS(2))]);

    // Given up: not told.
    let mut told = 0;
    let result: Result<u32, Fail> = Policy::immediate()
        .attempts(2)
        .retrying(|| Ok(1))
        .when_ok(|_| true)
        .on_success(|_, _| told += 1)
        .call();
    assert_eq!((result, told), (Ok(1), 0));
    // At once: one attempt.
    let mut attempts = 0;
    let result: Result<u32, Fail> = Policy::immediate()
        .retrying(|| Ok(1))
        .on_success(|_, e| attempts = e.attempts)
        .call();
    assert_eq!((result, attempts), (Ok(1), 1));
}
