//! The time left: `AttemptContext::remaining` and `deadline()`,
//! `RetryEvent::remaining`, and `attempt_timeout` cut to the time left,
//! through the attribute and without it, on tokio's paused clock.

use std::sync::Mutex;
use std::time::Duration;

use backoff_runtime::{Elapsed, Jitter, OnDeadline, Policy, RetryEvent, retry};
use tokio::time::{Instant, sleep};

const MS: fn(u64) -> Duration = Duration::from_millis;
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

/// Each attempt reads the time left until the whole-call `timeout`: 10 s,
/// then less each attempt's 500 ms and each sleep's second; `deadline()` is
/// the same instant every time.
#[tokio::test(start_paused = true)]
async fn the_context_counts_down_to_the_timeout() {
    static SEEN: Mutex<Vec<(Option<Duration>, Option<std::time::Instant>)>> =
        Mutex::new(Vec::new());

    #[retry(constant("1s"), jitter = "none", attempts = 4, timeout = "10s", context = ctx)]
    async fn call() -> Result<(), Fail> {
        SEEN.lock().unwrap().push((ctx.remaining, ctx.deadline()));
        sleep(MS(500)).await;
        Err(Fail::Down)
    }

    let began = Instant::now();
    assert_eq!(call().await, Err(Fail::Down));
    let seen = SEEN.lock().unwrap();
    let left: Vec<_> = seen.iter().map(|(left, _)| left.unwrap()).collect();
    assert_eq!(left, [MS(10_000), MS(8_500), MS(7_000), MS(5_500)]);
    let deadline = (began + SECS(10)).into_std();
    assert!(seen.iter().all(|(_, d)| *d == Some(deadline)), "{seen:?}");
}

/// `on_retry` reads the time left before the sleep; with both `timeout`
/// and `max_elapsed`, the nearer deadline counts. Without either, `None`.
#[tokio::test(start_paused = true)]
async fn the_event_reads_the_nearer_deadline() {
    static LEFT: Mutex<Vec<Option<Duration>>> = Mutex::new(Vec::new());

    #[retry(constant("1s"), jitter = "none", attempts = 3, max_elapsed = "5s", on_retry = |_e, ev| LEFT.lock().unwrap().push(ev.remaining))]
    async fn bounded() -> Result<(), Fail> {
        sleep(MS(500)).await;
        Err(Fail::Down)
    }

    #[retry(constant("1s"), jitter = "none", attempts = 3, max_elapsed = "5s", timeout = "2800ms", on_retry = |_e, ev| LEFT.lock().unwrap().push(ev.remaining))]
    async fn nearer() -> Result<(), Fail> {
        sleep(MS(500)).await;
        Err(Fail::Down)
    }

    #[retry(constant("1s"), jitter = "none", attempts = 2, on_retry = |_e, ev| LEFT.lock().unwrap().push(ev.remaining))]
    async fn unbounded() -> Result<(), Fail> {
        Err(Fail::Down)
    }

    assert_eq!(bounded().await, Err(Fail::Down));
    assert_eq!(*LEFT.lock().unwrap(), [Some(MS(4_500)), Some(MS(3_000))]);
    LEFT.lock().unwrap().clear();
    // (The timeout ends the call during the second sleep.)
    assert_eq!(nearer().await, Err(Fail::TimedOut));
    assert_eq!(*LEFT.lock().unwrap(), [Some(MS(2_300)), Some(MS(800))]);
    LEFT.lock().unwrap().clear();
    assert_eq!(unbounded().await, Err(Fail::Down));
    assert_eq!(*LEFT.lock().unwrap(), [None]);
}

/// `attempt_timeout` is cut to the time left: the second attempt starts at
/// 3 s with 500 ms left of `max_elapsed`, so it is cut there, not at 5 s,
/// and the call gives up at the deadline.
#[tokio::test(start_paused = true)]
async fn attempt_timeout_is_cut_to_the_time_left() {
    static ENDS: Mutex<Vec<Duration>> = Mutex::new(Vec::new());

    #[retry(constant("1s"), jitter = "none", attempts = unlimited, max_elapsed = "3500ms", attempt_timeout = "2s")]
    async fn hangs() -> Result<(), Fail> {
        sleep(SECS(60)).await;
        Err(Fail::Down)
    }

    let began = Instant::now();
    assert_eq!(hangs().await, Err(Fail::TimedOut));
    assert_eq!(began.elapsed(), MS(3_500));
    ENDS.lock().unwrap().clear();

    // Under a whole-call `timeout`, the same: the attempt in flight at the
    // deadline is cut by its own timer at 3.5 s, and the call ends there.
    #[retry(constant("1s"), jitter = "none", attempts = 2, timeout = "3500ms", attempt_timeout = "2s", context = ctx)]
    async fn hangs_under_timeout() -> Result<(), Fail> {
        ENDS.lock().unwrap().push(ctx.remaining.unwrap());
        sleep(SECS(60)).await;
        Err(Fail::Down)
    }
    let began = Instant::now();
    assert_eq!(hangs_under_timeout().await, Err(Fail::TimedOut));
    assert_eq!(began.elapsed(), MS(3_500));
    assert_eq!(*ENDS.lock().unwrap(), [MS(3_500), MS(500)]);
}

/// The last try that `on_deadline = "last_try"` grants starts at the
/// deadline: it reads `Some(0)` and keeps its whole `attempt_timeout`.
#[tokio::test(start_paused = true)]
async fn the_last_try_reads_zero_and_keeps_its_attempt_timeout() {
    static LEFT: Mutex<Vec<(Duration, bool)>> = Mutex::new(Vec::new());

    #[retry(constant("4s"), jitter = "none", attempts = unlimited, max_elapsed = "10s", on_deadline = "last_try", attempt_timeout = "3s", context = ctx)]
    async fn call() -> Result<&'static str, Fail> {
        LEFT.lock()
            .unwrap()
            .push((ctx.remaining.unwrap(), ctx.last));
        if ctx.last {
            // Longer than the time left, within `attempt_timeout`.
            sleep(MS(2_500)).await;
            return Ok("at the deadline");
        }
        sleep(MS(1_500)).await;
        Err(Fail::Down)
    }

    let began = Instant::now();
    assert_eq!(call().await, Ok("at the deadline"));
    // Attempts at 0, 5.5 and 10 s (the last sleep cut from 4 s to 3 s).
    assert_eq!(
        *LEFT.lock().unwrap(),
        [
            (SECS(10), false),
            (MS(4_500), false),
            (Duration::ZERO, true)
        ]
    );
    assert_eq!(began.elapsed(), MS(12_500));
}

/// Without the attribute: `Retrying`'s `on_retry` event under a `timeout`
/// and `max_elapsed`, and a hand-written loop's `RetryState::context`.
#[tokio::test(start_paused = true)]
async fn without_the_attribute() {
    let policy = Policy::constant(SECS(1))
        .jitter(Jitter::None)
        .attempts(3)
        .max_elapsed(SECS(5));
    let mut left = Vec::new();
    let result: Result<(), Fail> = policy
        .retrying_async(async || {
            sleep(MS(500)).await;
            Err(Fail::Down)
        })
        .timeout(SECS(4))
        .on_retry(|_, ev: &RetryEvent| left.push(ev.remaining))
        .call_async()
        .await;
    assert_eq!(result, Err(Fail::Down));
    assert_eq!(left, [Some(MS(3_500)), Some(MS(2_000))]);

    // A hand-written loop: the state's context of the next attempt.
    let policy = Policy::constant(SECS(4))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(SECS(10))
        .on_deadline(OnDeadline::LastTry);
    let mut state = policy.start_with_clock(backoff_runtime::clock::tokio);
    let mut seen = Vec::new();
    while let Some(delay) = state.next_delay() {
        sleep(delay).await;
        let ctx = state.context();
        seen.push((ctx.attempt, ctx.remaining.unwrap(), ctx.last));
    }
    assert_eq!(
        seen,
        [
            (2, SECS(6), false),
            (3, SECS(2), false),
            (4, Duration::ZERO, true)
        ]
    );
}
