//! The arguments for long-running services side by side, as a service
//! writes them (they landed separately; this guards their meeting in one
//! loop): `cancel`, `on_success`, `reset_after`, `max_elapsed` (the time
//! left) and a stage that ends by time, through the attribute and through
//! `Retrying`, on tokio's paused clock with exact delays.

use std::sync::Mutex;
use std::time::Duration;

use backoff_runtime::{CancelToken, Cancelled, GiveUpReason, Policy, SuccessEvent, retry};
use tokio::time::{Instant, sleep};

const SECS: fn(u64) -> Duration = Duration::from_secs;

#[derive(Debug, PartialEq)]
enum Fail {
    Down,
    Cancelled,
}

impl From<Cancelled> for Fail {
    fn from(_: Cancelled) -> Self {
        Fail::Cancelled
    }
}

/// A call that fails twice, then succeeds: `on_success` is told once, the
/// sleeps follow the timed stage (1 s, 1 s), and each attempt reads the
/// time left until `max_elapsed`.
#[tokio::test(start_paused = true)]
async fn a_success_with_every_argument_given() {
    static TOLD: Mutex<Vec<(u32, u32)>> = Mutex::new(Vec::new());
    static LEFT: Mutex<Vec<Option<Duration>>> = Mutex::new(Vec::new());

    #[retry(
        chain(constant("1s", for = "3s"), constant("1m")),
        jitter = "none",
        attempts = 5,
        max_elapsed = "10m",
        reset_after = "1h",
        cancel = token,
        context = ctx,
        on_success = |value, event: &SuccessEvent| TOLD.lock().unwrap().push((*value, event.attempts))
    )]
    async fn call(token: &CancelToken) -> Result<u32, Fail> {
        LEFT.lock().unwrap().push(ctx.remaining);
        if ctx.attempt < 3 {
            Err(Fail::Down)
        } else {
            Ok(7)
        }
    }

    let start = Instant::now();
    assert_eq!(call(&CancelToken::new()).await, Ok(7));
    assert_eq!(start.elapsed(), SECS(2));
    assert_eq!(*TOLD.lock().unwrap(), [(7, 3)]);
    assert_eq!(
        *LEFT.lock().unwrap(),
        [Some(SECS(600)), Some(SECS(599)), Some(SECS(598))]
    );
}

/// A cancel from another task during the minute-long sleep of the second
/// stage ends the call at once with the last error, reason `Cancelled`,
/// and `on_success` is never told.
#[tokio::test(start_paused = true)]
async fn a_cancel_in_the_second_stage_tells_no_success() {
    static REASON: Mutex<Option<GiveUpReason>> = Mutex::new(None);
    static TOLD: Mutex<u32> = Mutex::new(0);

    #[retry(
        chain(constant("1s", for = "2s"), constant("1m")),
        jitter = "none",
        attempts = unlimited,
        reset_after = "1h",
        cancel = token,
        on_giveup = |_, g| *REASON.lock().unwrap() = Some(g.reason),
        on_success = |_, _| *TOLD.lock().unwrap() += 1
    )]
    async fn call(token: &CancelToken) -> Result<u32, Fail> {
        Err(Fail::Down)
    }

    let token = CancelToken::new();
    let other = token.clone();
    tokio::spawn(async move {
        sleep(SECS(10)).await;
        other.cancel();
    });
    let start = Instant::now();
    assert_eq!(call(&token).await, Err(Fail::Down));
    // 1 s, 1 s (the stage has lasted 2 s), then the minute, cut at 10 s.
    assert_eq!(start.elapsed(), SECS(10));
    assert_eq!(*REASON.lock().unwrap(), Some(GiveUpReason::Cancelled));
    assert_eq!(*TOLD.lock().unwrap(), 0);
}

/// The same meeting without the attribute: `Retrying` with a token and
/// `on_success`, under a policy read from text with a timed stage.
#[tokio::test(start_paused = true)]
async fn retrying_with_a_token_and_on_success_under_a_parsed_policy() {
    let policy = Policy::parse(
        r#"chain(constant("1s", for = "3s"), constant("1m")), jitter = "none", attempts = 5"#,
    )
    .unwrap();
    let token = CancelToken::new();
    let mut told = Vec::new();
    let mut calls = 0;
    let start = Instant::now();
    let result: Result<u32, Fail> = policy
        .retrying_async(async || {
            calls += 1;
            if calls < 5 {
                Err(Fail::Down)
            } else {
                Ok(calls)
            }
        })
        .cancel(&token)
        .on_success(|value, event| told.push((*value, event.attempts, event.elapsed)))
        .call_async()
        .await;
    assert_eq!(result, Ok(5));
    // 1, 1, 1 s (3 s have passed), then the minute.
    assert_eq!(start.elapsed(), SECS(63));
    assert_eq!(told, [(5, 5, SECS(63))]);
}
