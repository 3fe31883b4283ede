//! Every loop ends an attempt in the runtime's one driver, so they agree:
//! a failed attempt's error is dropped before the sleep (and before the
//! next attempt), and giving up is reported the same way.

use std::cell::Cell;
use std::time::Duration;

use backoff_runtime::{GiveUp, GiveUpReason, Jitter, Policy, retry};

thread_local! {
    /// Errors made and not yet dropped, on this thread.
    static LIVE: Cell<u32> = const { Cell::new(0) };
    /// Moments (sleeps, attempts) that found an error alive.
    static SAW_LIVE: Cell<u32> = const { Cell::new(0) };
}

/// An error that counts itself alive.
#[derive(Debug)]
struct Counted;

impl Counted {
    fn new() -> Counted {
        LIVE.set(LIVE.get() + 1);
        Counted
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        LIVE.set(LIVE.get() - 1);
    }
}

/// Notes whether an error is alive now.
fn check_none_alive() {
    if LIVE.get() > 0 {
        SAW_LIVE.set(SAW_LIVE.get() + 1);
    }
}

fn reset() {
    LIVE.set(0);
    SAW_LIVE.set(0);
}

/// An operation that fails `failures` times, checking at each attempt that
/// the previous attempt's error is gone.
fn attempt(calls: &Cell<u32>, failures: u32) -> Result<u32, Counted> {
    check_none_alive();
    calls.set(calls.get() + 1);
    if calls.get() <= failures {
        Err(Counted::new())
    } else {
        Ok(calls.get())
    }
}

fn policy() -> Policy {
    Policy::constant(Duration::from_millis(10))
        .jitter(Jitter::None)
        .attempts(4)
}

#[test]
fn policy_retry_drops_each_error_before_the_next_attempt() {
    reset();
    let calls = Cell::new(0);
    assert_eq!(policy().retry(|| attempt(&calls, 2)).ok(), Some(3));
    assert_eq!((SAW_LIVE.get(), LIVE.get()), (0, 0));
}

#[test]
fn retrying_call_drops_each_error_before_the_next_attempt() {
    reset();
    let calls = Cell::new(0);
    let retried = Cell::new(0);
    let result = policy()
        .retrying(|| attempt(&calls, 2))
        // (`on_retry` sees the outcome: it is alive then, and only then.)
        .on_retry(|outcome: &Result<u32, Counted>, _: &_| {
            assert!(outcome.is_err());
            retried.set(retried.get() + 1);
        })
        .call();
    assert_eq!(result.ok(), Some(3));
    assert_eq!(retried.get(), 2);
    assert_eq!((SAW_LIVE.get(), LIVE.get()), (0, 0));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn retry_async_with_sleep_drops_the_error_before_the_sleep() {
    reset();
    let calls = Cell::new(0);
    let sleeps = Cell::new(0);
    let result = policy()
        .retry_async_with_sleep(
            async || attempt(&calls, 2),
            |_| {
                check_none_alive();
                sleeps.set(sleeps.get() + 1);
                std::future::ready(())
            },
        )
        .await;
    assert_eq!(result.ok(), Some(3));
    assert_eq!(sleeps.get(), 2);
    assert_eq!((SAW_LIVE.get(), LIVE.get()), (0, 0));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn retrying_call_async_drops_each_error_before_the_next_attempt() {
    reset();
    let calls = Cell::new(0);
    let start = tokio::time::Instant::now();
    let result = policy()
        .retrying_async(async || attempt(&calls, 3))
        .call_async()
        .await;
    assert_eq!(result.ok(), Some(4));
    assert_eq!(start.elapsed(), Duration::from_millis(30), "three sleeps");
    assert_eq!((SAW_LIVE.get(), LIVE.get()), (0, 0));
}

fn noting_sleep(_: Duration) {
    check_none_alive();
}

/// Fails twice, then succeeds.
#[retry(constant("10ms"), attempts = 4, jitter = "none", sleep = noting_sleep)]
fn attribute_blocking(calls: &Cell<u32>) -> Result<u32, Counted> {
    attempt(calls, 2)
}

#[test]
fn the_attribute_drops_the_error_before_a_blocking_sleep() {
    reset();
    let calls = Cell::new(0);
    assert_eq!(attribute_blocking(&calls).ok(), Some(3));
    assert_eq!((SAW_LIVE.get(), LIVE.get()), (0, 0));
}

/// Fails twice, then succeeds; a `when` that borrows nothing, so the
/// runtime's loop runs it (every attempt and the verdict behind pointers).
#[retry(immediate, attempts = 4, when = |_| true)]
fn attribute_blocking_when(calls: &Cell<u32>) -> Result<u32, Counted> {
    attempt(calls, 2)
}

#[test]
fn the_attributes_runtime_loop_with_when_drops_each_error_before_the_next_attempt() {
    reset();
    let calls = Cell::new(0);
    assert_eq!(attribute_blocking_when(&calls).ok(), Some(3));
    assert_eq!((SAW_LIVE.get(), LIVE.get()), (0, 0));
}

/// Giving up: the attribute, `retrying` and the driver's report agree on
/// the calls made and the reason, for the attempt limit and for `Stop`.
#[test]
fn every_loop_reports_giving_up_alike() {
    fn give_up_of_retrying(stop: bool) -> GiveUp {
        let calls = Cell::new(0);
        let mut report = None;
        let _ = policy()
            .retrying(|| attempt(&calls, u32::MAX))
            .when(|_: &Counted| !stop)
            .on_giveup(|_: &Result<u32, Counted>, g: &GiveUp| report = Some(*g))
            .call();
        report.expect("gave up")
    }

    #[retry(constant("1ms"), attempts = 4, jitter = "none", sleep = noting_sleep,
            when = |_| !*stop, on_giveup = |_: &Result<u32, Counted>, g: &GiveUp| report.set(Some(*g)))]
    fn attribute(
        calls: &Cell<u32>,
        stop: &bool,
        report: &Cell<Option<GiveUp>>,
    ) -> Result<u32, Counted> {
        attempt(calls, u32::MAX)
    }

    for (stop, reason, attempts) in [
        (false, GiveUpReason::Attempts, 4),
        (true, GiveUpReason::Stopped, 1),
    ] {
        let from_retrying = give_up_of_retrying(stop);
        let from_attribute = Cell::new(None);
        let _ = attribute(&Cell::new(0), &stop, &from_attribute);
        let from_attribute = from_attribute.get().expect("gave up");
        assert_eq!(
            (from_retrying.attempts, from_retrying.reason),
            (attempts, reason)
        );
        assert_eq!(
            (from_attribute.attempts, from_attribute.reason),
            (attempts, reason)
        );
    }
}

/// Whether a failure is worth a retry, by kind.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Busy {
    Busy,
}

/// An unlimited kind keeps advancing its schedule past its 255th failure
/// (the count a call once kept in a byte), to its `max`: on the paused
/// clock, the 300 failures of `linear(base = "1ms", max = "1h")` sleep
/// 1 + 2 + ... + 300 ms, each delay one more than the one before.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_unlimited_kind_keeps_advancing_past_its_255th_failure() {
    #[retry(when = |_: &Busy| Busy::Busy, jitter = "none",
            on(Busy::Busy, linear(base = "1ms", max = "1h"), attempts = unlimited),
            on_retry = |_, event| delays.borrow_mut().push(event.delay))]
    async fn busy(
        calls: &Cell<u32>,
        delays: &std::cell::RefCell<Vec<Duration>>,
    ) -> Result<u32, Busy> {
        calls.set(calls.get() + 1);
        if calls.get() <= 300 {
            Err(Busy::Busy)
        } else {
            Ok(calls.get())
        }
    }
    let (calls, delays) = (Cell::new(0), std::cell::RefCell::new(Vec::new()));
    let start = tokio::time::Instant::now();
    let result = busy(&calls, &delays).await;
    assert_eq!((result, calls.get()), (Ok(301), 301));
    let expected: Vec<Duration> = (1..=300).map(Duration::from_millis).collect();
    assert_eq!(*delays.borrow(), expected);
    assert_eq!(start.elapsed(), Duration::from_millis(300 * 301 / 2));
}
