//! The arguments for long-running services under `hedge`, on tokio's
//! paused clock with exact times:
//!
//! - `on_success` is told once of the `Ok` a hedged call accepted, with
//!   the attempts it started (the losers included) and the time since it
//!   began; never when it gives up (an `Ok` that `when_ok` rejected to the
//!   end, every attempt failed, its `timeout`), nor for `fallback`'s value;
//! - the same through the runtime's `Hedge::on_success`;
//! - each hedged attempt is told the time left until the call's deadline
//!   (`timeout`, or the policy's `max_elapsed`), and its `attempt_timeout`
//!   is cut to it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::HedgeDelay;
use backoff_runtime::{
    AttemptContext, AttemptKind, Elapsed, GiveUp, GiveUpReason, Policy, SuccessEvent, retry,
};
use tokio::time::{Instant, sleep};

const MS: fn(u64) -> Duration = Duration::from_millis;

#[derive(Debug, PartialEq, Clone)]
enum Error {
    Down,
    TimedOut,
}

impl From<Elapsed> for Error {
    fn from(_: Elapsed) -> Self {
        Error::TimedOut
    }
}

/// The nth attempt (from 1) of `calls` sleeps `latency[n - 1]` ms and
/// gives `outcome[n - 1]`.
async fn attempt(
    calls: &AtomicU32,
    latency: &[u64],
    outcome: &[Result<u32, Error>],
) -> Result<u32, Error> {
    let n = calls.fetch_add(1, Ordering::SeqCst) as usize;
    sleep(MS(latency[n])).await;
    outcome[n].clone()
}

/// Attempt 1 hangs, the hedge at 20 ms answers at 30 ms: `on_success` is
/// told of its value, 2 attempts (the loser counted) and 30 ms, once.
#[tokio::test(start_paused = true)]
async fn on_success_is_told_of_the_hedge_that_won() {
    static TOLD: Mutex<Vec<(u32, SuccessEvent)>> = Mutex::new(Vec::new());

    #[retry(hedge = "20ms", attempts = 3,
            on_success = |value, event: &SuccessEvent| TOLD.lock().unwrap().push((*value, *event)))]
    async fn call(calls: &AtomicU32) -> Result<u32, Error> {
        attempt(calls, &[1000, 10, 10], &[Ok(1), Ok(2), Ok(3)]).await
    }

    let began = Instant::now();
    assert_eq!(call(&AtomicU32::new(0)).await, Ok(2));
    assert_eq!(began.elapsed(), MS(30));
    let told = TOLD.lock().unwrap().clone();
    assert_eq!(told.len(), 1);
    let (value, event) = told[0];
    assert_eq!((value, event.attempts, event.elapsed), (2, 2, MS(30)));
}

/// A failure starts the next attempt at once, and an `Ok` that `when_ok`
/// rejects does too: the third attempt's `Ok` is the one told, after 3
/// attempts and the 5 + 5 + 5 ms they took in turn.
#[tokio::test(start_paused = true)]
async fn on_success_counts_the_failures_and_rejected_values_before_it() {
    let told = Mutex::new(None);

    #[retry(hedge = "20ms", attempts = 3, when_ok = |v| *v == 0,
            on_success = |value, event| *told.lock().unwrap() = Some((*value, event.attempts, event.elapsed)))]
    async fn call(
        calls: &AtomicU32,
        told: &Mutex<Option<(u32, u32, Duration)>>,
    ) -> Result<u32, Error> {
        let _ = told;
        attempt(calls, &[5, 5, 5], &[Err(Error::Down), Ok(0), Ok(9)]).await
    }

    assert_eq!(call(&AtomicU32::new(0), &told).await, Ok(9));
    assert_eq!(*told.lock().unwrap(), Some((9, 3, MS(15))));
}

/// Never on a give-up: an `Ok` that `when_ok` rejected to the end (the
/// call returns it, `on_giveup` hears of it), every attempt failed and
/// `fallback` made an `Ok`, or the `timeout` ran out.
#[tokio::test(start_paused = true)]
async fn on_success_is_never_told_of_a_give_up_or_a_fallback() {
    static TOLD: AtomicU32 = AtomicU32::new(0);
    static GAVE_UP: Mutex<Vec<(Result<u32, Error>, u32)>> = Mutex::new(Vec::new());

    #[retry(hedge = "20ms", attempts = 2, when_ok = |v| *v == 0,
            on_giveup = |r, g: &GiveUp| GAVE_UP.lock().unwrap().push((r.clone(), g.attempts)),
            on_success = |_, _| { TOLD.fetch_add(1, Ordering::SeqCst); })]
    async fn rejected(calls: &AtomicU32) -> Result<u32, Error> {
        attempt(calls, &[5, 5], &[Ok(0), Ok(0)]).await
    }

    #[retry(hedge = "20ms", attempts = 2,
            fallback = |_, _| Ok(42),
            on_success = |_, _| { TOLD.fetch_add(1, Ordering::SeqCst); })]
    async fn failed(calls: &AtomicU32) -> Result<u32, Error> {
        attempt(calls, &[5, 5], &[Err(Error::Down), Err(Error::Down)]).await
    }

    #[retry(hedge = "20ms", attempts = 3, timeout = "50ms",
            on_success = |_, _| { TOLD.fetch_add(1, Ordering::SeqCst); })]
    async fn stuck(calls: &AtomicU32) -> Result<u32, Error> {
        attempt(calls, &[1000, 1000, 1000], &[Ok(1), Ok(2), Ok(3)]).await
    }

    assert_eq!(rejected(&AtomicU32::new(0)).await, Ok(0));
    assert_eq!(*GAVE_UP.lock().unwrap(), [(Ok(0), 2)]);
    assert_eq!(failed(&AtomicU32::new(0)).await, Ok(42));
    let began = Instant::now();
    assert_eq!(stuck(&AtomicU32::new(0)).await, Err(Error::TimedOut));
    assert_eq!(began.elapsed(), MS(50));
    assert_eq!(TOLD.load(Ordering::SeqCst), 0);
}

/// Through the runtime: `Hedge::on_success` beside `on_giveup`, which
/// each call tells exactly one of.
#[tokio::test(start_paused = true)]
async fn the_runtime_tells_on_success_or_on_giveup_once() {
    static POLICY: Policy = Policy::immediate().attempts(2);
    let run = |outcome: [Result<u32, Error>; 2]| async move {
        let calls = AtomicU32::new(0);
        let mut told = Vec::new();
        let mut gave_up = Vec::new();
        let result = POLICY
            .hedge_async::<2>(HedgeDelay::After(MS(20)))
            .on_success(|v: &u32, e: &SuccessEvent| told.push((*v, e.attempts, e.elapsed)))
            .on_giveup(|r: &Result<u32, Error>, g: &GiveUp| gave_up.push((r.clone(), g.attempts)))
            .call(|| attempt(&calls, &[30, 30], &outcome))
            .await;
        (result, told, gave_up)
    };
    // Both attempts run (the hedge at 20 ms); the first answers at 30 ms.
    assert_eq!(
        run([Ok(1), Ok(2)]).await,
        (Ok(1), vec![(1, 2, MS(30))], vec![])
    );
    assert_eq!(
        run([Err(Error::Down), Ok(2)]).await,
        (Ok(2), vec![(2, 2, MS(50))], vec![])
    );
    assert_eq!(
        run([Err(Error::Down), Err(Error::Down)]).await,
        (Err(Error::Down), vec![], vec![(Err(Error::Down), 2)])
    );
}

/// `timeout = "100ms"`: attempts at 0, 20 and 40 ms (two hedges) are told
/// 100, 80 and 60 ms left, and the same deadline, the call's end.
#[tokio::test(start_paused = true)]
async fn hedged_attempts_are_told_the_time_left_until_the_timeout() {
    /// An attempt's number, kind, time left and deadline.
    type Seen = (
        u32,
        AttemptKind,
        Option<Duration>,
        Option<std::time::Instant>,
    );
    static SEEN: Mutex<Vec<Seen>> = Mutex::new(Vec::new());

    #[retry(hedge = "20ms", attempts = 3, timeout = "100ms", context = ctx)]
    async fn call() -> Result<u32, Error> {
        SEEN.lock()
            .unwrap()
            .push((ctx.attempt, ctx.kind, ctx.remaining, ctx.deadline()));
        // The first two hang; the third answers after 5 ms.
        sleep(MS(if ctx.attempt < 3 { 1000 } else { 5 })).await;
        Ok(ctx.attempt)
    }

    let began = Instant::now();
    assert_eq!(call().await, Ok(3));
    assert_eq!(began.elapsed(), MS(45));
    let end = Some(began.into_std() + MS(100));
    assert_eq!(
        *SEEN.lock().unwrap(),
        [
            (1, AttemptKind::Original, Some(MS(100)), end),
            (2, AttemptKind::Hedge, Some(MS(80)), end),
            (3, AttemptKind::Hedge, Some(MS(60)), end),
        ]
    );
}

/// `attempt_timeout = "80ms"` beside `timeout = "100ms"`: attempt 1 fails
/// at 60 ms and the retry it starts has 40 ms left (`on_retry` is told
/// so), to which its timer is cut: it ends by its own timer at the call's
/// deadline, so the call gives up for its attempts, with the attempt's
/// error, rather than being cut off by `timeout` (which an 80 ms timer,
/// running to 140 ms, would leave it to).
#[tokio::test(start_paused = true)]
async fn a_hedged_attempt_timeout_is_cut_to_the_time_left() {
    static LEFT: Mutex<Vec<Option<Duration>>> = Mutex::new(Vec::new());
    static GAVE_UP: Mutex<Vec<(GiveUpReason, u32, Duration)>> = Mutex::new(Vec::new());

    #[retry(hedge = "1s", attempts = 2, timeout = "100ms", attempt_timeout = "80ms",
            on_retry = |_, ev| LEFT.lock().unwrap().push(ev.remaining),
            on_giveup = |_, g| GAVE_UP.lock().unwrap().push((g.reason, g.attempts, g.elapsed)))]
    async fn call(calls: &AtomicU32) -> Result<u32, Error> {
        attempt(calls, &[60, 1000], &[Err(Error::Down), Ok(2)]).await
    }

    let began = Instant::now();
    assert_eq!(call(&AtomicU32::new(0)).await, Err(Error::TimedOut));
    assert_eq!(began.elapsed(), MS(100));
    assert_eq!(*LEFT.lock().unwrap(), [Some(MS(40))]);
    assert_eq!(
        *GAVE_UP.lock().unwrap(),
        [(GiveUpReason::Attempts, 2, MS(100))]
    );
}

/// Through the runtime, a policy's `max_elapsed` is the hedged call's
/// deadline: attempts at 0 and 20 ms read 100 and 80 ms left.
#[tokio::test(start_paused = true)]
async fn the_runtime_tells_hedged_attempts_the_time_left_until_max_elapsed() {
    static POLICY: Policy = Policy::immediate()
        .attempts(2)
        .max_elapsed(Duration::from_millis(100));
    let seen = Mutex::new(Vec::new());
    let began = Instant::now();
    let result: Result<u32, Error> = POLICY
        .hedge_async::<2>(HedgeDelay::After(MS(20)))
        .call_with_context(|ctx: AttemptContext| {
            seen.lock().unwrap().push((ctx.remaining, ctx.deadline()));
            async move {
                sleep(MS(if ctx.attempt == 1 { 1000 } else { 5 })).await;
                Ok(ctx.attempt)
            }
        })
        .await;
    assert_eq!(result, Ok(2));
    let end = Some(began.into_std() + MS(100));
    assert_eq!(
        *seen.lock().unwrap(),
        [(Some(MS(100)), end), (Some(MS(80)), end)]
    );
}
