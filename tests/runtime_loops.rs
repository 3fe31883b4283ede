//! The retry loops of the runtime without the attribute: [`Policy::retry`]
//! (blocking), [`Policy::retry_async`] and
//! [`Policy::retry_async_with_sleep`], the async ones on tokio's paused
//! virtual clock so that elapsed times are asserted exactly.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::{Decision, Jitter, Policy, clock};
use backoff_workspace_tests::Flaky;
use tokio::time::Instant;

const MS: fn(u64) -> Duration = Duration::from_millis;
const SECS: fn(u64) -> Duration = Duration::from_secs;

/// Never succeeds: every call fails with its own number.
const ALWAYS: u32 = u32::MAX;

/// For loops with unlimited attempts that only a deadline should end: the
/// operation succeeds after this many failures, so a loop that ignored the
/// deadline returns `Ok` (and the test fails) instead of hanging.
const FUSE: u32 = 1000;

// ---------------------------------------------------------------------------
// Blocking loop
// ---------------------------------------------------------------------------

#[test]
fn blocking_retry_stops_calling_at_the_first_success() {
    let flaky = Flaky::new(2);
    let result = Policy::immediate().attempts(10).retry(|| flaky.call());
    assert_eq!(result, Ok(3));
    assert_eq!(flaky.calls(), 3);
}

#[test]
fn blocking_retry_returns_the_last_error_unchanged() {
    // An error type that is neither `Clone` nor `PartialEq`: the loop must
    // hand back the very value the last attempt returned.
    let mut calls = 0;
    let result: Result<(), std::io::Error> = Policy::constant(MS(1)).attempts(4).retry(|| {
        calls += 1;
        Err(std::io::Error::other(format!("attempt {calls}")))
    });
    let err = result.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::Other);
    assert_eq!(err.to_string(), "attempt 4");
    assert_eq!(calls, 4);
}

#[test]
fn blocking_retry_makes_exactly_the_attempts_allowed() {
    for attempts in 1..=6 {
        let flaky = Flaky::new(ALWAYS);
        let result = Policy::immediate()
            .attempts(attempts)
            .retry(|| flaky.call());
        assert_eq!(result, Err(attempts), "attempts = {attempts}");
        assert_eq!(flaky.calls(), attempts);
    }
}

#[test]
fn blocking_retry_with_one_attempt_never_retries() {
    let flaky = Flaky::new(1);
    let result = Policy::constant(SECS(3600))
        .attempts(1)
        .retry(|| flaky.call());
    assert_eq!(result, Err(1));
    assert_eq!(flaky.calls(), 1);
}

#[test]
fn blocking_retry_gives_up_at_once_when_the_first_sleep_would_cross_the_deadline() {
    // Unlimited attempts; a 20 ms sleep can never fit in a 1 ms deadline,
    // so the loop must give up after the first call instead of sleeping.
    let flaky = Flaky::new(FUSE);
    let result = Policy::constant(MS(20))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(MS(1))
        .retry(|| flaky.call());
    assert_eq!(result, Err(1));
    assert_eq!(flaky.calls(), 1);
}

#[test]
fn blocking_retry_with_unlimited_attempts_ends_at_the_deadline() {
    // Each sleep is 1 ms and the deadline 30 ms after the start, so at most
    // 30 sleeps fit (sleeping never takes less than asked): at most 31
    // calls, whatever the machine's speed. A loop that ignored the deadline
    // would never return.
    let flaky = Flaky::new(FUSE);
    let result = Policy::constant(MS(1))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(MS(30))
        .retry(|| flaky.call());
    let calls = flaky.calls();
    assert_eq!(result, Err(calls), "the last error is returned");
    assert!((1..=31).contains(&calls), "{calls} calls");
}

// ---------------------------------------------------------------------------
// Async loop on tokio's virtual clock
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn async_constant_1s_four_failed_attempts_sleep_exactly_3s() {
    let flaky = Flaky::new(ALWAYS);
    let policy = Policy::constant(SECS(1)).jitter(Jitter::None).attempts(4);
    let start = Instant::now();
    let result = policy.retry_async(async || flaky.call()).await;
    assert_eq!(result, Err(4), "the last error, unchanged");
    assert_eq!(flaky.calls(), 4);
    assert_eq!(start.elapsed(), SECS(3));
}

#[tokio::test(start_paused = true)]
async fn async_exponential_sleeps_100_200_400ms() {
    let flaky = Flaky::new(ALWAYS);
    let policy = Policy::exponential(MS(100))
        .factor(2.0)
        .jitter(Jitter::None)
        .attempts(4);
    let start = Instant::now();
    let result = policy.retry_async(async || flaky.call()).await;
    assert_eq!(result, Err(4));
    assert_eq!(start.elapsed(), MS(100 + 200 + 400));
}

#[tokio::test(start_paused = true)]
async fn async_exponential_sleeps_are_capped_at_max_delay() {
    let flaky = Flaky::new(ALWAYS);
    let policy = Policy::exponential(MS(100))
        .max_delay(MS(300))
        .jitter(Jitter::None)
        .attempts(6);
    let start = Instant::now();
    assert_eq!(policy.retry_async(async || flaky.call()).await, Err(6));
    assert_eq!(start.elapsed(), MS(100 + 200 + 300 + 300 + 300));
}

#[tokio::test(start_paused = true)]
async fn async_success_stops_the_loop_and_returns_the_value() {
    let flaky = Flaky::new(2);
    let policy = Policy::constant(SECS(1)).jitter(Jitter::None).attempts(10);
    let start = Instant::now();
    let result = policy.retry_async(async || flaky.call()).await;
    assert_eq!(result, Ok(3));
    assert_eq!(flaky.calls(), 3);
    assert_eq!(start.elapsed(), SECS(2), "no sleep after the success");
}

#[tokio::test(start_paused = true)]
async fn async_first_call_success_neither_retries_nor_sleeps() {
    let flaky = Flaky::new(0);
    let policy = Policy::constant(SECS(1)).jitter(Jitter::None).attempts(10);
    let start = Instant::now();
    assert_eq!(policy.retry_async(async || flaky.call()).await, Ok(1));
    assert_eq!(flaky.calls(), 1);
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn async_returns_the_last_error_unchanged() {
    let mut calls = 0;
    let policy = Policy::immediate().attempts(3);
    let result: Result<(), std::io::Error> = policy
        .retry_async(async || {
            calls += 1;
            Err(std::io::Error::other(format!("attempt {calls}")))
        })
        .await;
    assert_eq!(result.unwrap_err().to_string(), "attempt 3");
    assert_eq!(calls, 3);
}

#[tokio::test(start_paused = true)]
async fn async_deadline_stops_unlimited_attempts_on_the_virtual_clock() {
    // Calls at 0, 1, 2, 3 s; after the fourth, 3 s + 1 s > 3.5 s: give up.
    let flaky = Flaky::new(FUSE);
    let policy = Policy::constant(SECS(1))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(MS(3500));
    let start = Instant::now();
    let result = policy.retry_async(async || flaky.call()).await;
    assert_eq!(result, Err(4));
    assert_eq!(flaky.calls(), 4);
    assert_eq!(start.elapsed(), SECS(3));
}

#[tokio::test(start_paused = true)]
async fn async_deadline_allows_a_sleep_ending_exactly_at_it() {
    // Calls at 0, 1, 2, 3 s; the third sleep ends at exactly 3 s: allowed.
    let flaky = Flaky::new(FUSE);
    let policy = Policy::constant(SECS(1))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(SECS(3));
    let start = Instant::now();
    assert_eq!(policy.retry_async(async || flaky.call()).await, Err(4));
    assert_eq!(start.elapsed(), SECS(3));
}

#[tokio::test(start_paused = true)]
async fn async_deadline_counts_the_time_spent_in_attempts() {
    // Each attempt takes 1 s, each sleep 1 s, the deadline is 4.5 s:
    // attempt 1 [0, 1], sleep [1, 2], attempt 2 [2, 3], sleep [3, 4],
    // attempt 3 [4, 5]; a sleep to 6 s would cross 4.5 s: give up at 5 s.
    let flaky = Flaky::new(FUSE);
    let policy = Policy::constant(SECS(1))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(MS(4500));
    let start = Instant::now();
    let result = policy
        .retry_async(async || {
            tokio::time::sleep(SECS(1)).await;
            flaky.call()
        })
        .await;
    assert_eq!(result, Err(3));
    assert_eq!(start.elapsed(), SECS(5));
}

#[tokio::test(start_paused = true)]
async fn async_loop_sleeps_the_jittered_schedule_on_tokio() {
    // With a seed, the default tokio sleep waits the jittered schedule of
    // `delays()`: at least its sum, and at most 1 ms more per sleep (tokio's
    // timer rounds each deadline up to the millisecond).
    let flaky = Flaky::new(ALWAYS);
    let policy = Policy::exponential(MS(100))
        .max_delay(MS(300))
        .jitter(Jitter::Full)
        .attempts(6)
        .seed(9);
    let schedule: Vec<Duration> = policy.delays().collect();
    assert!(schedule.iter().all(|d| *d <= MS(300)));
    let total: Duration = schedule.iter().sum();
    let start = Instant::now();
    assert_eq!(policy.retry_async(async || flaky.call()).await, Err(6));
    let elapsed = start.elapsed();
    assert!(
        elapsed >= total && elapsed <= total + MS(5),
        "slept {elapsed:?} for a schedule of {total:?}"
    );
}

// ---------------------------------------------------------------------------
// Custom sleep
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn custom_sleep_replaces_tokio_sleep_and_sees_every_delay() {
    let slept = RefCell::new(Vec::new());
    let flaky = Flaky::new(ALWAYS);
    let policy = Policy::exponential(MS(100))
        .jitter(Jitter::None)
        .attempts(4);
    let start = Instant::now();
    let result = policy
        .retry_async_with_sleep(
            async || flaky.call(),
            |d| {
                slept.borrow_mut().push(d);
                std::future::ready(())
            },
        )
        .await;
    assert_eq!(result, Err(4));
    assert_eq!(*slept.borrow(), [MS(100), MS(200), MS(400)]);
    assert_eq!(
        start.elapsed(),
        Duration::ZERO,
        "tokio's sleep was not used"
    );
}

#[tokio::test(start_paused = true)]
async fn async_loop_sleeps_exactly_the_seeded_schedule_of_delays() {
    // `delays()` is documented as the sleeps of a call whose attempts all
    // fail: with a seed, the loop must sleep exactly that, jitter included.
    let policy = Policy::exponential(MS(100))
        .max_delay(SECS(2))
        .jitter(Jitter::Full)
        .attempts(8)
        .seed(42);
    let schedule: Vec<Duration> = policy.delays().collect();
    assert_eq!(schedule.len(), 7);
    let slept = RefCell::new(Vec::new());
    let flaky = Flaky::new(ALWAYS);
    let result = policy
        .retry_async_with_sleep(
            async || flaky.call(),
            |d| {
                slept.borrow_mut().push(d);
                tokio::time::sleep(d)
            },
        )
        .await;
    assert_eq!(result, Err(8));
    assert_eq!(*slept.borrow(), schedule);
    assert!(schedule.iter().all(|d| *d <= SECS(2)));
}

#[tokio::test(start_paused = true)]
async fn custom_sleep_is_not_called_on_success() {
    let sleeps = AtomicU32::new(0);
    let flaky = Flaky::new(0);
    let result = Policy::constant(SECS(1))
        .retry_async_with_sleep(
            async || flaky.call(),
            |_| {
                sleeps.fetch_add(1, Ordering::SeqCst);
                std::future::ready(())
            },
        )
        .await;
    assert_eq!(result, Ok(1));
    assert_eq!(sleeps.load(Ordering::SeqCst), 0);
}

// ---------------------------------------------------------------------------
// Send and cancellation
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_async_future_is_send_and_runs_on_a_multi_thread_runtime() {
    let policy = Policy::constant(MS(1)).jitter(Jitter::Full).attempts(5);
    let flaky = Arc::new(Flaky::new(2));
    let task = {
        let flaky = Arc::clone(&flaky);
        // `tokio::spawn` requires `Send + 'static`: this compiles only if the
        // loop's future (state, jitter generator, sleep) is `Send`. The
        // closure owns what it uses (`async move`): an async closure that
        // borrows a local trips rustc's "implementation of `Send` is not
        // general enough" (rust-lang/rust#139475), with any `AsyncFnMut`
        // taker, not only this one.
        tokio::spawn(async move { policy.retry_async(async move || flaky.call()).await })
    };
    assert_eq!(task.await.unwrap(), Ok(3));
    assert_eq!(flaky.calls(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_async_with_sleep_future_is_send_with_a_send_sleep() {
    let policy = Policy::exponential(MS(1))
        .jitter(Jitter::Equal)
        .max_elapsed(SECS(60))
        .attempts(4);
    let flaky = Arc::new(Flaky::new(ALWAYS));
    let task = {
        let flaky = Arc::clone(&flaky);
        tokio::spawn(async move {
            policy
                .retry_async_with_sleep(async move || flaky.call(), tokio::time::sleep)
                .await
        })
    };
    assert_eq!(task.await.unwrap(), Err(4));
    assert_eq!(flaky.calls(), 4);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_mid_sleep_cancels_the_remaining_attempts() {
    // Calls at 0 s and 10 s; the timeout drops the loop at 15 s, during the
    // second sleep.
    let flaky = Arc::new(Flaky::new(ALWAYS));
    let policy = Policy::constant(SECS(10)).jitter(Jitter::None).attempts(5);
    let start = Instant::now();
    let op = {
        let flaky = Arc::clone(&flaky);
        async move || flaky.call()
    };
    let outcome = tokio::time::timeout(SECS(15), policy.retry_async(op)).await;
    assert!(outcome.is_err(), "the loop was still sleeping");
    assert_eq!(start.elapsed(), SECS(15));
    assert_eq!(flaky.calls(), 2);
    assert_eq!(
        Arc::strong_count(&flaky),
        1,
        "the dropped future released the operation"
    );

    // Nothing keeps running in the background.
    tokio::time::sleep(SECS(100)).await;
    assert_eq!(flaky.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_mid_attempt_cancels_cleanly() {
    // Attempts take 2 s, sleeps 1 s: attempt 1 [0, 2], sleep [2, 3],
    // attempt 2 starts at 3 s and is dropped at 4 s.
    let started = AtomicU32::new(0);
    let finished = AtomicU32::new(0);
    let policy = Policy::constant(SECS(1)).jitter(Jitter::None).attempts(5);
    let outcome = tokio::time::timeout(
        SECS(4),
        policy.retry_async(async || -> Result<(), ()> {
            started.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(SECS(2)).await;
            finished.fetch_add(1, Ordering::SeqCst);
            Err(())
        }),
    )
    .await;
    assert!(outcome.is_err());
    assert_eq!(started.load(Ordering::SeqCst), 2);
    assert_eq!(finished.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------------------
// A hand-written loop over the state machine, on tokio's clock
// ---------------------------------------------------------------------------

#[derive(Debug, PartialEq)]
enum HttpError {
    Unavailable,
    TooManyRequests { retry_after: Duration },
    NotFound,
}

fn classify(e: &HttpError) -> Decision {
    match e {
        HttpError::Unavailable => Decision::Retry,
        HttpError::TooManyRequests { retry_after } => Decision::RetryAfter(*retry_after),
        HttpError::NotFound => Decision::Stop,
    }
}

/// Drives `policy` by hand over the scripted responses, sleeping on tokio's
/// clock; returns the result and the sleeps made.
async fn manual_loop(
    policy: &Policy,
    mut responses: Vec<Result<&'static str, HttpError>>,
) -> (Result<&'static str, HttpError>, Vec<Duration>) {
    responses.reverse();
    let mut state = policy.start_with_clock(clock::tokio);
    let mut slept = Vec::new();
    loop {
        match responses.pop().expect("script ran out") {
            Ok(v) => return (Ok(v), slept),
            Err(e) => match state.next_delay_for(classify(&e)) {
                Some(d) => {
                    let event = state.event(d);
                    assert_eq!(event.attempt as usize, slept.len() + 1);
                    tokio::time::sleep(d).await;
                    slept.push(d);
                }
                None => return (Err(e), slept),
            },
        }
    }
}

#[tokio::test(start_paused = true)]
async fn manual_loop_waits_retry_after_exactly_even_above_max() {
    let policy = Policy::constant(SECS(1))
        .jitter(Jitter::None)
        .max_delay(SECS(1))
        .attempts(5);
    let start = Instant::now();
    let (result, slept) = manual_loop(
        &policy,
        vec![
            Err(HttpError::Unavailable),
            Err(HttpError::TooManyRequests {
                retry_after: SECS(30),
            }),
            Ok("body"),
        ],
    )
    .await;
    assert_eq!(result, Ok("body"));
    assert_eq!(slept, [SECS(1), SECS(30)]);
    assert_eq!(start.elapsed(), SECS(31));
}

#[tokio::test(start_paused = true)]
async fn manual_loop_stop_returns_the_error_at_once() {
    let policy = Policy::constant(SECS(1)).jitter(Jitter::None).attempts(5);
    let start = Instant::now();
    let (result, slept) = manual_loop(
        &policy,
        vec![Err(HttpError::Unavailable), Err(HttpError::NotFound)],
    )
    .await;
    assert_eq!(result, Err(HttpError::NotFound));
    assert_eq!(slept, [SECS(1)]);
    assert_eq!(start.elapsed(), SECS(1));
}

#[tokio::test(start_paused = true)]
async fn manual_loop_gives_up_when_retry_after_would_cross_the_deadline() {
    // 1 s of sleep, then the server asks for 10 s: 1 + 10 > 5, give up at
    // once rather than sleep.
    let policy = Policy::constant(SECS(1))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(SECS(5));
    let start = Instant::now();
    let (result, slept) = manual_loop(
        &policy,
        vec![
            Err(HttpError::Unavailable),
            Err(HttpError::TooManyRequests {
                retry_after: SECS(10),
            }),
        ],
    )
    .await;
    assert_eq!(
        result,
        Err(HttpError::TooManyRequests {
            retry_after: SECS(10)
        })
    );
    assert_eq!(slept, [SECS(1)]);
    assert_eq!(start.elapsed(), SECS(1));
}
