//! `cancel = TOKEN`, `Retrying::cancel` and `Policy::retry_cancellable`: a
//! cancel ends a sleep at once, the call returns its last outcome (reason
//! `Cancelled`, which `on_giveup` and `fallback` see), a token cancelled
//! before the first attempt fails the call with `E::from(Cancelled)`
//! without running the body, and an attempt in flight runs to its end.
//! Async cases run on tokio's paused clock, with exact times.

use backoff_runtime::{CancelToken, Cancelled, GiveUp, GiveUpReason, Jitter, Policy, retry};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use tokio::time::Instant;

#[derive(Debug, PartialEq)]
enum Failure {
    Down(u32),
    Cancelled,
}

impl From<Cancelled> for Failure {
    fn from(_: Cancelled) -> Self {
        Failure::Cancelled
    }
}

/// A token cancelled after `after`, on the paused clock.
fn cancel_after(after: Duration) -> CancelToken {
    let token = CancelToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        canceller.cancel();
    });
    token
}

#[retry(constant("10s"), jitter = "none", attempts = 5, cancel = token, on_giveup = |_, g: &GiveUp| reports.lock().unwrap().push((g.attempts, g.reason)))]
async fn flaky(
    token: &CancelToken,
    calls: &AtomicU32,
    reports: &Mutex<Vec<(u32, GiveUpReason)>>,
) -> Result<u32, Failure> {
    Err(Failure::Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[tokio::test(start_paused = true)]
async fn a_cancel_mid_sleep_returns_the_last_outcome_at_once() {
    let (calls, reports) = (AtomicU32::new(0), Mutex::new(Vec::new()));
    let token = cancel_after(Duration::from_secs(15));
    let start = Instant::now();
    // Attempts at 0 s and 10 s; the cancel at 15 s ends the second sleep.
    assert_eq!(flaky(&token, &calls, &reports).await, Err(Failure::Down(2)));
    assert_eq!(start.elapsed(), Duration::from_secs(15));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(*reports.lock().unwrap(), [(2, GiveUpReason::Cancelled)]);
}

#[tokio::test(start_paused = true)]
async fn a_token_cancelled_before_the_first_attempt_runs_no_body() {
    let (calls, reports) = (AtomicU32::new(0), Mutex::new(Vec::new()));
    let token = CancelToken::new();
    token.cancel();
    assert_eq!(
        flaky(&token, &calls, &reports).await,
        Err(Failure::Cancelled)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(*reports.lock().unwrap(), [(0, GiveUpReason::Cancelled)]);
}

#[tokio::test(start_paused = true)]
async fn without_a_cancel_the_schedule_runs_out() {
    let (calls, reports) = (AtomicU32::new(0), Mutex::new(Vec::new()));
    let start = Instant::now();
    assert_eq!(
        flaky(&CancelToken::new(), &calls, &reports).await,
        Err(Failure::Down(5))
    );
    assert_eq!(start.elapsed(), Duration::from_secs(40));
    assert_eq!(*reports.lock().unwrap(), [(5, GiveUpReason::Attempts)]);
}

#[retry(constant("1s"), jitter = "none", attempts = 10, cancel = token, fallback = |e: Failure, g: &GiveUp| {
    assert_eq!((g.reason, g.attempts), (GiveUpReason::Cancelled, 3));
    match e { Failure::Down(n) => Ok(100 + n), e => Err(e) }
})]
async fn with_fallback(token: &CancelToken, calls: &AtomicU32) -> Result<u32, Failure> {
    Err(Failure::Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[tokio::test(start_paused = true)]
async fn fallback_sees_the_cancel() {
    let calls = AtomicU32::new(0);
    let token = cancel_after(Duration::from_millis(2500));
    let start = Instant::now();
    assert_eq!(with_fallback(&token, &calls).await, Ok(103));
    assert_eq!(start.elapsed(), Duration::from_millis(2500));
}

/// An attempt that takes 5 s: a cancel at 2 s lets it end, and the call
/// then returns its outcome rather than sleep.
#[retry(constant("1s"), jitter = "none", attempts = 3, cancel = token, when_ok = |v: &u32| *v == 0)]
async fn slow(token: &CancelToken, value: u32) -> Result<u32, Failure> {
    tokio::time::sleep(Duration::from_secs(5)).await;
    if value == 1 {
        Err(Failure::Down(1))
    } else {
        Ok(value)
    }
}

#[tokio::test(start_paused = true)]
async fn an_attempt_in_flight_runs_to_its_end() {
    for (value, expected) in [(1, Err(Failure::Down(1))), (0, Ok(0)), (7, Ok(7))] {
        let token = cancel_after(Duration::from_secs(2));
        let start = Instant::now();
        assert_eq!(slow(&token, value).await, expected);
        assert_eq!(start.elapsed(), Duration::from_secs(5));
    }
}

#[retry(constant("30s"), jitter = "none", attempts = 3, cancel = shutdown)]
async fn tokio_util_token(shutdown: tokio_util::sync::CancellationToken) -> std::io::Result<()> {
    Err(std::io::Error::other("down"))
}

#[tokio::test(start_paused = true)]
async fn a_tokio_util_token_cancels_too() {
    let shutdown = tokio_util::sync::CancellationToken::new();
    let canceller = shutdown.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(40)).await;
        canceller.cancel();
    });
    let start = Instant::now();
    let e = tokio_util_token(shutdown.clone()).await.unwrap_err();
    assert_eq!(e.to_string(), "down");
    assert_eq!(start.elapsed(), Duration::from_secs(40));
    let e = tokio_util_token(shutdown).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::Interrupted);
}

#[tokio::test(start_paused = true)]
async fn a_cancel_ends_the_async_sleep() {
    let token = cancel_after(Duration::from_secs(7));
    let start = Instant::now();
    let mut calls = 0;
    let result: Result<(), Failure> = Policy::constant(Duration::from_secs(3))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .retrying_async(async || {
            calls += 1;
            Err(Failure::Down(calls))
        })
        .cancel(&token)
        .call_async()
        .await;
    // Attempts at 0, 3 and 6 s; the cancel at 7 s.
    assert_eq!(result, Err(Failure::Down(3)));
    assert_eq!(start.elapsed(), Duration::from_secs(7));
}

#[retry(constant("1h"), jitter = "none", attempts = 3, cancel = token, on_retry = |_, _| { let _ = started.send(()); })]
fn blocking(
    token: &CancelToken,
    started: &mpsc::Sender<()>,
    calls: &AtomicU32,
) -> Result<(), Failure> {
    Err(Failure::Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

/// A plain fn sleeping an hour between attempts, cancelled from another
/// thread: it returns its last outcome at once. (A version that slept in
/// `std::thread::sleep` would hang here; the minute's guard fails it.)
#[test]
fn a_plain_fn_is_cancelled_from_another_thread_while_it_sleeps() {
    let token = CancelToken::new();
    let calls = Arc::new(AtomicU32::new(0));
    let (started, retrying) = mpsc::channel();
    let (done, result) = mpsc::channel();
    let (worker_token, worker_calls) = (token.clone(), Arc::clone(&calls));
    std::thread::spawn(move || {
        let _ = done.send(blocking(&worker_token, &started, &worker_calls));
    });
    // The first attempt failed and its retry was granted: the hour's sleep
    // begins (or is about to).
    retrying.recv().unwrap();
    token.cancel();
    let result = result
        .recv_timeout(Duration::from_secs(60))
        .expect("the cancel ends the sleep");
    assert_eq!(result, Err(Failure::Down(1)));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn retrying_cancel_and_retry_cancellable_block_on_the_token() {
    let token = CancelToken::new();
    let canceller = token.clone();
    let (attempted, first) = mpsc::channel();
    let mut reason = None;
    let result: Result<(), Failure> = std::thread::scope(|s| {
        // (Cancelled once the first attempt has run.)
        s.spawn(move || {
            first.recv().unwrap();
            canceller.cancel();
        });
        Policy::constant(Duration::from_secs(3600))
            .retrying(|| {
                let _ = attempted.send(());
                Err(Failure::Down(1))
            })
            .on_giveup(|_, g| reason = Some(g.reason))
            .cancel(&token)
            .call()
    });
    assert_eq!(result, Err(Failure::Down(1)));
    assert_eq!(reason, Some(GiveUpReason::Cancelled));
    let mut calls = 0;
    let again: Result<(), Failure> = Policy::immediate().retry_cancellable(&token, || {
        calls += 1;
        Ok(())
    });
    assert_eq!((again, calls), (Err(Failure::Cancelled), 0));
}

/// Each attempt answers after a second, with an error.
#[retry(hedge = "100ms", attempts = 3, cancel = token, on_giveup = |_, g: &GiveUp| reports.lock().unwrap().push((g.attempts, g.reason)))]
async fn hedged(
    token: &CancelToken,
    calls: &AtomicU32,
    reports: &Mutex<Vec<(u32, GiveUpReason)>>,
) -> Result<u32, Failure> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(Failure::Down(n))
}

/// Beside `hedge`, a cancel starts no further attempt and drops none in
/// flight: the call ends when the last one does, with its outcome.
#[tokio::test(start_paused = true)]
async fn a_cancel_starts_no_hedge_and_drops_none() {
    // Cancelled at 50 ms: the first attempt alone, to its end at 1 s.
    let (calls, reports) = (AtomicU32::new(0), Mutex::new(Vec::new()));
    let token = cancel_after(Duration::from_millis(50));
    let start = Instant::now();
    assert_eq!(
        hedged(&token, &calls, &reports).await,
        Err(Failure::Down(1))
    );
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(*reports.lock().unwrap(), [(1, GiveUpReason::Cancelled)]);

    // Cancelled at 150 ms: the hedge of 100 ms runs too, no third at 200 ms;
    // the last to end (at 1.1 s) is the call's outcome.
    let (calls, reports) = (AtomicU32::new(0), Mutex::new(Vec::new()));
    let token = cancel_after(Duration::from_millis(150));
    let start = Instant::now();
    assert_eq!(
        hedged(&token, &calls, &reports).await,
        Err(Failure::Down(2))
    );
    assert_eq!(start.elapsed(), Duration::from_millis(1100));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(*reports.lock().unwrap(), [(2, GiveUpReason::Cancelled)]);

    // Not cancelled: three attempts, the last ending at 1.2 s.
    let (calls, reports) = (AtomicU32::new(0), Mutex::new(Vec::new()));
    let start = Instant::now();
    assert_eq!(
        hedged(&CancelToken::new(), &calls, &reports).await,
        Err(Failure::Down(3))
    );
    assert_eq!(start.elapsed(), Duration::from_millis(1200));
    assert_eq!(*reports.lock().unwrap(), [(3, GiveUpReason::Attempts)]);

    // Cancelled before: no attempt.
    let (calls, reports) = (AtomicU32::new(0), Mutex::new(Vec::new()));
    let token = CancelToken::new();
    token.cancel();
    assert_eq!(
        hedged(&token, &calls, &reports).await,
        Err(Failure::Cancelled)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(*reports.lock().unwrap(), [(0, GiveUpReason::Cancelled)]);
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Small {
    Busy,
    Cancelled,
}

impl From<Cancelled> for Small {
    fn from(_: Cancelled) -> Self {
        Small::Cancelled
    }
}

/// `Copy` outcomes (the kept outcome adds no lint), beside `when_ok` and
/// `on_retry` in a plain fn.
#[retry(immediate, attempts = 3, cancel = token, when_ok = |v: &u8| *v == 0, on_retry = |_, _| {})]
fn small(token: &CancelToken, value: u8) -> Result<u8, Small> {
    if value == 1 {
        Err(Small::Busy)
    } else {
        Ok(value)
    }
}

#[test]
fn copy_outcomes_are_kept_and_returned() {
    let token = CancelToken::new();
    assert_eq!(small(&token, 1), Err(Small::Busy));
    assert_eq!(small(&token, 0), Ok(0));
    token.cancel();
    assert_eq!(small(&token, 2), Err(Small::Cancelled));
}

/// Beside `timeout` and a `sleep` of the user's: the sleep races the
/// token, and the timeout still bounds the call.
#[retry(constant("10s"), jitter = "none", attempts = unlimited, cancel = token, timeout = "25s", sleep = tokio::time::sleep)]
async fn bounded(token: &CancelToken) -> std::io::Result<()> {
    Err(std::io::Error::other("down"))
}

#[tokio::test(start_paused = true)]
async fn a_cancel_beside_timeout_and_sleep() {
    let token = cancel_after(Duration::from_secs(12));
    let start = Instant::now();
    assert_eq!(bounded(&token).await.unwrap_err().to_string(), "down");
    assert_eq!(start.elapsed(), Duration::from_secs(12));
    // Not cancelled: the timeout ends it, at 25 s.
    let start = Instant::now();
    let e = bounded(&CancelToken::new()).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    assert_eq!(start.elapsed(), Duration::from_secs(25));
}
