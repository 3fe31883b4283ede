//! The arguments for long-running services under `hedge`, on tokio's
//! paused clock with exact times:
//!
//! - `on_success` is told once of the `Ok` a hedged call accepted, with
//!   the attempts it started (the losers included) and the time since it
//!   began; never when it gives up (an `Ok` that `when_ok` rejected to the
//!   end, every attempt failed, its `timeout`), nor for `fallback`'s value;
//! - the same through the runtime's `Hedge::on_success`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::hedge::HedgeDelay;
use backoff_runtime::{Elapsed, GiveUp, Policy, SuccessEvent, retry};
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
