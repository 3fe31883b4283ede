//! The runtime without the attribute can say what `#[retry]` says:
//! `Policy::retrying` / `retrying_async` with `when`, `when_ok`, `on_retry`,
//! `on_giveup`, a budget, a breaker and (async) a whole-call timeout; and a
//! hand-driven `RetryState` reports why it gave up. On tokio's paused clock.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::{
    CircuitBreaker, CircuitOpen, Decision, Elapsed, GiveUp, GiveUpReason, Jitter, Policy,
    RetryBudget,
};
use tokio::time::Instant;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[derive(Debug, PartialEq)]
enum Error {
    Down(u32),
    Open,
    TimedOut,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

impl From<Elapsed> for Error {
    fn from(_: Elapsed) -> Self {
        Error::TimedOut
    }
}

#[tokio::test(start_paused = true)]
async fn when_ok_retries_an_ok_and_a_retry_after_is_waited_exactly() {
    let policy = Policy::constant(Duration::from_secs(1))
        .jitter(Jitter::None)
        .attempts(4);
    let calls = Cell::new(0u32);
    let start = Instant::now();
    let result: Result<u16, Error> = policy
        .retrying_async(async || {
            calls.set(calls.get() + 1);
            Ok(if calls.get() < 3 { 503 } else { 200 })
        })
        .when_ok(|status| match (*status, calls.get()) {
            (503, 1) => Decision::RetryAfter(ms(4200)),
            (503, _) => Decision::Retry,
            _ => Decision::Stop,
        })
        .call_async()
        .await;
    assert_eq!(result, Ok(200));
    assert_eq!(
        start.elapsed(),
        ms(5200),
        "4.2 s as asked, then the 1 s backoff"
    );
}

#[test]
fn the_last_ok_is_returned_unchanged_and_the_reason_is_reported() {
    let reports = RefCell::new(Vec::new());
    let mut n = 0;
    let result: Result<u32, Error> = Policy::immediate()
        .attempts(3)
        .retrying(|| {
            n += 1;
            Ok(n)
        })
        .when_ok(|_| true)
        .on_giveup(|outcome, g| reports.borrow_mut().push((format!("{outcome:?}"), *g)))
        .call();
    assert_eq!(result, Ok(3));
    let reports = reports.into_inner();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].0, "Ok(3)");
    assert_eq!(reports[0].1.reason, GiveUpReason::Attempts);
    assert_eq!(reports[0].1.attempts, 3);
}

#[test]
fn on_retry_sees_each_retried_outcome_and_on_giveup_never_runs_on_success() {
    let seen = RefCell::new(Vec::new());
    let gave_up = Cell::new(false);
    let mut n = 0;
    let result: Result<u32, u32> = Policy::immediate()
        .attempts(5)
        .retrying(|| {
            n += 1;
            match n {
                1 => Err(1),
                2 => Ok(0),
                _ => Ok(n),
            }
        })
        .when_ok(|v| *v == 0)
        .on_retry(|outcome, ev| seen.borrow_mut().push((*outcome, ev.attempt)))
        .on_giveup(|_, _| gave_up.set(true))
        .call();
    assert_eq!(result, Ok(3));
    assert_eq!(seen.into_inner(), [(Err(1), 1), (Ok(0), 2)]);
    assert!(!gave_up.get());
}

#[test]
fn every_reason_is_readable_after_the_loop() {
    fn reason_of(run: impl FnOnce(&mut dyn FnMut(GiveUp))) -> GiveUp {
        let mut report = None;
        run(&mut |g| report = Some(g));
        report.expect("on_giveup ran")
    }
    // Stopped.
    let g = reason_of(|hook| {
        let _ = Policy::immediate()
            .retrying(|| Err::<(), _>(Error::Down(1)))
            .when(|_| false)
            .on_giveup(|_, g| hook(*g))
            .call();
    });
    assert_eq!((g.reason, g.attempts), (GiveUpReason::Stopped, 1));
    // Deadline: a RetryAfter past max_elapsed, and one past retry_after_max.
    for policy in [
        Policy::immediate().max_elapsed(Duration::from_secs(10)),
        Policy::immediate().retry_after_max(Duration::from_secs(10)),
    ] {
        let g = reason_of(|hook| {
            let _ = policy
                .retrying(|| Err::<(), _>(Error::Down(1)))
                .when(|_| Decision::RetryAfter(Duration::from_secs(11)))
                .on_giveup(|_, g| hook(*g))
                .call();
        });
        assert_eq!((g.reason, g.attempts), (GiveUpReason::Deadline, 1));
    }
    // Budget.
    static EMPTY: RetryBudget = RetryBudget::new(0, 0.0);
    let g = reason_of(|hook| {
        let _ = Policy::immediate()
            .retrying(|| Err::<(), _>(Error::Down(1)))
            .budget(&EMPTY)
            .on_giveup(|_, g| hook(*g))
            .call();
    });
    assert_eq!(g.reason, GiveUpReason::Budget);
    // CircuitOpen, refusing the first attempt.
    let breaker = CircuitBreaker::new(1, 1, Duration::from_secs(3600));
    let calls = Cell::new(0);
    let policy = Policy::immediate().attempts(1);
    let op = || {
        calls.set(calls.get() + 1);
        Err::<(), _>(Error::Down(calls.get()))
    };
    assert_eq!(
        policy.retrying(op).circuit(&breaker).call(),
        Err(Error::Down(1))
    );
    let mut outcome = String::new();
    let g = reason_of(|hook| {
        let _ = policy
            .retrying(op)
            .circuit(&breaker)
            .on_giveup(|o, g| {
                outcome = format!("{o:?}");
                hook(*g)
            })
            .call();
    });
    assert_eq!((g.reason, g.attempts), (GiveUpReason::CircuitOpen, 0));
    assert_eq!(outcome, "Err(Open)");
    assert_eq!(calls.get(), 1, "the body ran behind an open breaker");
}

#[tokio::test(start_paused = true)]
async fn timeout_cancels_the_attempt_in_flight_exactly_at_the_deadline() {
    let dropped = AtomicU32::new(0);
    struct Guard<'a>(&'a AtomicU32);
    impl Drop for Guard<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let calls = AtomicU32::new(0);
    let report = Cell::new(None);
    let start = Instant::now();
    let result: Result<(), Error> = Policy::constant(Duration::from_secs(1))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .retrying_async(async || {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            if n == 2 {
                let _guard = Guard(&dropped);
                std::future::pending::<()>().await;
            }
            Err(Error::Down(n))
        })
        .timeout(ms(1500))
        .on_giveup(|_, g| report.set(Some(*g)))
        .call_async()
        .await;
    assert_eq!(result, Err(Error::TimedOut));
    assert_eq!(start.elapsed(), ms(1500));
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    let report = report.get().unwrap();
    assert_eq!(
        (report.reason, report.attempts, report.elapsed),
        (GiveUpReason::Timeout, 2, ms(1500))
    );
}

#[test]
fn a_timed_call_is_send() {
    fn send<F: Send>(_: F) {}
    static POLICY: Policy = Policy::immediate();
    send(
        POLICY
            .retrying_async(async || Ok::<u32, std::io::Error>(1))
            .timeout(Duration::from_secs(1))
            .on_giveup(|_, _| {})
            .call_async(),
    );
}

#[test]
fn a_hand_driven_state_reports_why_it_gave_up() {
    let policy = Policy::immediate().attempts(3);
    let mut state = policy.start();
    assert_eq!(state.give_up(), None);
    while state.next_delay().is_some() {}
    let g = state.give_up().unwrap();
    assert_eq!((g.reason, g.attempts), (GiveUpReason::Attempts, 3));

    let mut state = policy.start();
    assert_eq!(
        state.next_delay_for(Decision::RetryAfter(Duration::from_secs(301))),
        None
    );
    assert_eq!(state.give_up().unwrap().reason, GiveUpReason::Deadline);
}
