//! `reset_after`: an attempt that ran long before it failed starts the
//! schedule over, through the attribute and without it, on tokio's paused
//! clock with exact delays.

use std::sync::Mutex;
use std::time::Duration;

use backoff_runtime::{Elapsed, GiveUp, Jitter, Policy, RetryEvent, retry};
use tokio::time::{Instant, sleep};

const SECS: fn(u64) -> Duration = Duration::from_secs;

#[derive(Debug, PartialEq)]
enum Fail {
    Dropped,
    TimedOut,
}

impl From<Elapsed> for Fail {
    fn from(_: Elapsed) -> Self {
        Fail::TimedOut
    }
}

/// What `on_retry` saw: the attempt, the sleep, the run.
type Seen = Mutex<Vec<(u32, Duration, u32)>>;

/// How long each attempt runs before it fails, by attempt (the rest: 0).
fn runs_for(attempt: u32, long: &[u32]) -> Duration {
    if long.contains(&attempt) {
        SECS(90)
    } else {
        Duration::ZERO
    }
}

/// The session of attempt 3 runs 90 s, past `reset_after = "1m"`: its
/// failure is the first of run 2, so the next sleep is the schedule's first
/// (1 s) and `attempts = 3` counts from it; `context.attempt` keeps
/// counting, and the report counts the call's 5 attempts.
#[tokio::test(start_paused = true)]
async fn a_long_attempt_starts_the_schedule_over() {
    static SEEN: Seen = Mutex::new(Vec::new());
    static REPORT: Mutex<Option<GiveUp>> = Mutex::new(None);
    static ATTEMPTS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

    #[retry(
        exponential(base = "1s"),
        jitter = "none",
        attempts = 3,
        reset_after = "1m",
        context = ctx,
        on_retry = |_e, ev| SEEN.lock().unwrap().push((ev.attempt, ev.delay, ev.run)),
        on_giveup = |_r, g| *REPORT.lock().unwrap() = Some(*g)
    )]
    async fn session() -> Result<(), Fail> {
        ATTEMPTS.lock().unwrap().push(ctx.attempt);
        sleep(runs_for(ctx.attempt, &[3])).await;
        Err(Fail::Dropped)
    }

    let began = Instant::now();
    assert_eq!(session().await, Err(Fail::Dropped));
    assert_eq!(
        *SEEN.lock().unwrap(),
        [
            (1, SECS(1), 1),
            (2, SECS(2), 1),
            (3, SECS(1), 2),
            (4, SECS(2), 2)
        ]
    );
    assert_eq!(*ATTEMPTS.lock().unwrap(), [1, 2, 3, 4, 5]);
    assert_eq!(REPORT.lock().unwrap().unwrap().attempts, 5);
    assert_eq!(began.elapsed(), SECS(1 + 2 + 90 + 1 + 2));
}

/// An attempt shorter than `reset_after` changes nothing: the call gives
/// up after 3 attempts, as without it.
#[tokio::test(start_paused = true)]
async fn a_short_attempt_does_not() {
    static SEEN: Seen = Mutex::new(Vec::new());

    #[retry(exponential(base = "1s"), jitter = "none", attempts = 3, reset_after = "1m", on_retry = |_e, ev| SEEN.lock().unwrap().push((ev.attempt, ev.delay, ev.run)))]
    async fn session() -> Result<(), Fail> {
        sleep(SECS(59)).await;
        Err(Fail::Dropped)
    }

    assert_eq!(session().await, Err(Fail::Dropped));
    assert_eq!(*SEEN.lock().unwrap(), [(1, SECS(1), 1), (2, SECS(2), 1)]);
}

/// `max_elapsed` counts from the failure that began the run: 10 s to
/// reconnect after each dropped session. `timeout` still bounds the whole
/// call.
#[tokio::test(start_paused = true)]
async fn max_elapsed_counts_from_the_run_and_timeout_the_call() {
    static SLEEPS: Mutex<Vec<Duration>> = Mutex::new(Vec::new());

    #[retry(exponential(base = "1s"), jitter = "none", attempts = unlimited, max_elapsed = "10s", reset_after = "1m", context = ctx, on_retry = |_e, ev| SLEEPS.lock().unwrap().push(ev.delay))]
    async fn listener() -> Result<(), Fail> {
        sleep(runs_for(ctx.attempt, &[4])).await;
        Err(Fail::Dropped)
    }

    let began = Instant::now();
    assert_eq!(listener().await, Err(Fail::Dropped));
    // Run 1: sleeps 1, 2, 4 (attempt 4 at 7 s); it runs 90 s and fails at
    // 97 s; run 2: 1, 2, 4 again, until 7 s + 8 s would pass 10 s.
    let s = |v: &[u64]| v.iter().map(|&n| SECS(n)).collect::<Vec<_>>();
    assert_eq!(*SLEEPS.lock().unwrap(), s(&[1, 2, 4, 1, 2, 4]));
    assert_eq!(began.elapsed(), SECS(7 + 90 + 7));

    #[retry(exponential(base = "1s"), jitter = "none", attempts = 3, reset_after = "1m", timeout = "93s", context = ctx)]
    async fn bounded() -> Result<(), Fail> {
        sleep(runs_for(ctx.attempt, &[2])).await;
        Err(Fail::Dropped)
    }
    // Attempt 2 fails at 91 s and starts run 2, whose attempts would end
    // at 94 s; the call's `timeout` ends it at 93 s, during the second sleep.
    let began = Instant::now();
    assert_eq!(bounded().await, Err(Fail::TimedOut));
    assert_eq!(began.elapsed(), SECS(93));
}

/// Without the attribute: `Policy::reset_after` with `Retrying`, and the
/// plain async loop.
#[tokio::test(start_paused = true)]
async fn without_the_attribute() {
    let policy = Policy::exponential(SECS(1))
        .jitter(Jitter::None)
        .attempts(3)
        .reset_after(SECS(60));
    let mut attempt = 0;
    let mut seen = Vec::new();
    let result: Result<(), Fail> = policy
        .retrying_async(async || {
            attempt += 1;
            sleep(runs_for(attempt, &[3])).await;
            Err(Fail::Dropped)
        })
        .on_retry(|_, ev: &RetryEvent| seen.push((ev.attempt, ev.delay, ev.run)))
        .call_async()
        .await;
    assert_eq!(result, Err(Fail::Dropped));
    assert_eq!(
        seen,
        [
            (1, SECS(1), 1),
            (2, SECS(2), 1),
            (3, SECS(1), 2),
            (4, SECS(2), 2)
        ]
    );

    let began = Instant::now();
    let mut attempt = 0;
    let result: Result<(), Fail> = policy
        .retry_async(async || {
            attempt += 1;
            sleep(runs_for(attempt, &[2, 4])).await;
            Err(Fail::Dropped)
        })
        .await;
    assert_eq!(result, Err(Fail::Dropped));
    // Attempts 2 and 4 each start a run: sleeps 1, (90) 1, 2, (90) 1, 2.
    assert_eq!(attempt, 6);
    assert_eq!(began.elapsed(), SECS(1 + 90 + 1 + 2 + 90 + 1 + 2));
}

/// The kinds' counts start over too: `on(..)` arms limit the new run.
#[tokio::test(start_paused = true)]
async fn each_kinds_count_starts_over() {
    #[derive(Debug, PartialEq)]
    enum Failure {
        Busy,
    }
    static SEEN: Seen = Mutex::new(Vec::new());

    #[retry(
        attempts = unlimited,
        jitter = "none",
        reset_after = "1m",
        when = |_e: &Failure| Failure::Busy,
        on(Failure::Busy, constant("5s"), attempts = 2),
        context = ctx,
        on_retry = |_e, ev| SEEN.lock().unwrap().push((ev.attempt, ev.delay, ev.run))
    )]
    async fn call() -> Result<(), Failure> {
        sleep(runs_for(ctx.attempt, &[2])).await;
        Err(Failure::Busy)
    }

    assert_eq!(call().await, Err(Failure::Busy));
    // The kind allows 2 attempts per run: attempt 2 ran long and started
    // run 2, which allows attempt 3; attempt 3 is its second and last.
    assert_eq!(*SEEN.lock().unwrap(), [(1, SECS(5), 1), (2, SECS(5), 2)]);
}

/// A `Policy` built with `reset_after`, given to the attribute as
/// `policy = ..`: the attribute follows it.
#[tokio::test(start_paused = true)]
async fn a_policy_with_reset_after_under_the_attribute() {
    static SESSION: Policy = Policy::exponential(Duration::from_secs(1))
        .jitter(Jitter::None)
        .attempts(2)
        .reset_after(Duration::from_secs(60));
    static SEEN: Seen = Mutex::new(Vec::new());

    #[retry(policy = &SESSION, context = ctx, on_retry = |_e, ev| SEEN.lock().unwrap().push((ev.attempt, ev.delay, ev.run)))]
    async fn session() -> Result<(), Fail> {
        sleep(runs_for(ctx.attempt, &[2, 3])).await;
        Err(Fail::Dropped)
    }

    assert_eq!(session().await, Err(Fail::Dropped));
    // Attempts 2 and 3 each ran 90 s: each failure is a new run's first;
    // attempt 4, the second of run 3, is its last.
    assert_eq!(
        *SEEN.lock().unwrap(),
        [(1, SECS(1), 1), (2, SECS(1), 2), (3, SECS(1), 3)]
    );
}
