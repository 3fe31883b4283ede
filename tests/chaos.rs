//! `#[retry(chaos = CHAOS)]` (feature `chaos`): faults and latency drawn
//! inside each attempt, before the body, seen as real outcomes by `when`,
//! `attempt_timeout`, the breaker, the budget, hedging and the hooks; the
//! same seed gives the same injections.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::{
    Chaos, CircuitBreaker, CircuitOpen, CircuitState, Decision, GiveUp, GiveUpReason, RetryBudget,
    retry,
};

#[derive(Debug, Clone, PartialEq)]
enum Error {
    /// What the chaos injects.
    Injected,
    /// A permanent failure, which `when` stops on.
    Invalid,
    Open,
    Elapsed,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

impl From<backoff_runtime::Elapsed> for Error {
    fn from(_: backoff_runtime::Elapsed) -> Self {
        Error::Elapsed
    }
}

static FIRST: Chaos<Error> = Chaos::new(2024).fault(0.4, || Error::Injected);
static SECOND: Chaos<Error> = Chaos::new(2024).fault(0.4, || Error::Injected);

#[retry(immediate, attempts = 2, chaos = FIRST)]
fn first(ran: &Cell<u32>) -> Result<u32, Error> {
    ran.set(ran.get() + 1);
    Ok(ran.get())
}

#[retry(immediate, attempts = 2, chaos = SECOND)]
fn second(ran: &Cell<u32>) -> Result<u32, Error> {
    ran.set(ran.get() + 1);
    Ok(ran.get())
}

/// Two functions under two `Chaos` of the same seed meet the same faults,
/// call for call; a fault skips the body; some calls give up.
#[test]
fn the_same_seed_gives_the_same_injections() {
    let (ran_1, ran_2) = (Cell::new(0), Cell::new(0));
    let a: Vec<_> = (0..200).map(|_| first(&ran_1)).collect();
    let b: Vec<_> = (0..200).map(|_| second(&ran_2)).collect();
    assert_eq!(a, b);
    let gave_up = a.iter().filter(|r| r.is_err()).count() as u32;
    assert!((16..50).contains(&gave_up), "{gave_up} of 200 (0.4² = 32)");
    assert_eq!(ran_1.get(), 200 - gave_up, "a fault does not run the body");
    assert_eq!(
        u64::from(ran_1.get()) + FIRST.faults(),
        FIRST.faults() + 200 - u64::from(gave_up)
    );
}

static PERMANENT: Chaos<Error> = Chaos::new(1).fault(1.0, || Error::Invalid);

fn transient(e: &Error) -> Decision {
    match e {
        Error::Invalid => Decision::Stop,
        _ => Decision::Retry,
    }
}

#[retry(immediate, attempts = 5, when = transient, chaos = PERMANENT,
    on_giveup = |_: &Result<(), Error>, give_up: &GiveUp| assert_eq!(give_up.reason, GiveUpReason::Stopped))]
fn judged() -> Result<(), Error> {
    Ok(())
}

/// `when` judges an injected error as any other: `Stop` ends the call.
#[test]
fn when_sees_an_injected_error() {
    assert_eq!(judged(), Err(Error::Invalid));
    assert_eq!(PERMANENT.faults(), 1);
}

static DOWN: Chaos<Error> = Chaos::new(5).fault(1.0, || Error::Injected);
static BREAKER: CircuitBreaker = CircuitBreaker::new(3, 1, Duration::from_secs(60));

#[retry(immediate, attempts = 2, circuit = BREAKER, chaos = DOWN)]
fn guarded(ran: &Cell<u32>) -> Result<(), Error> {
    ran.set(ran.get() + 1);
    Ok(())
}

/// A breaker counts injected faults as failures, opens, and then refuses
/// calls, which draw nothing.
#[test]
fn a_breaker_opens_on_injected_faults() {
    let ran = Cell::new(0);
    assert_eq!(guarded(&ran), Err(Error::Injected)); // 2 failures
    assert_eq!(BREAKER.state(), CircuitState::Closed);
    assert!(guarded(&ran).is_err()); // the 3rd opens it
    assert_eq!(BREAKER.state(), CircuitState::Open);
    let drawn = DOWN.faults();
    assert_eq!(guarded(&ran), Err(Error::Open));
    assert_eq!(DOWN.faults(), drawn, "a refused call draws nothing");
    assert_eq!(ran.get(), 0, "the body never ran");
}

static FLAKY: Chaos<Error> = Chaos::new(9).fault(1.0, || Error::Injected);
static BUDGET: RetryBudget = RetryBudget::new(3, 0.1);

#[retry(immediate, attempts = 10, budget = BUDGET, chaos = FLAKY)]
fn budgeted() -> Result<(), Error> {
    Ok(())
}

/// Each retry of an injected fault spends the budget like a real one.
#[test]
fn the_budget_pays_for_injected_faults() {
    let reasons = Cell::new(Vec::new());
    #[retry(immediate, attempts = 10, budget = BUDGET, chaos = FLAKY,
        on_giveup = |_: &Result<(), Error>, g: &GiveUp| {
            let mut all = reasons.take();
            all.push(g.reason);
            reasons.set(all);
        })]
    fn spent(reasons: &Cell<Vec<GiveUpReason>>) -> Result<(), Error> {
        let _ = reasons;
        Ok(())
    }
    assert_eq!(spent(&reasons), Err(Error::Injected));
    assert_eq!(BUDGET.tokens(), 0.0, "three retries spent the three tokens");
    assert_eq!(reasons.take(), [GiveUpReason::Budget]);
    assert_eq!(budgeted(), Err(Error::Injected));
    assert_eq!(FLAKY.faults(), 5, "4 attempts, then 1 with no token left");
}

static SLOW: Chaos<Error> = Chaos::new(3).latency(1.0, Duration::from_millis(500));

#[retry(immediate, attempts = 2, attempt_timeout = "100ms", chaos = SLOW)]
async fn timed(ran: &AtomicU32) -> Result<(), Error> {
    ran.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Injected latency is inside the attempt: `attempt_timeout` cancels it,
/// on tokio's paused clock, and the body never starts.
#[tokio::test(start_paused = true)]
async fn attempt_timeout_cancels_injected_latency() {
    let ran = AtomicU32::new(0);
    fn send<T: Send>(t: T) -> T {
        t
    }
    let started = tokio::time::Instant::now();
    assert_eq!(send(timed(&ran)).await, Err(Error::Elapsed));
    assert_eq!(started.elapsed(), Duration::from_millis(200));
    assert_eq!(ran.load(Ordering::Relaxed), 0);
    assert_eq!(SLOW.delays(), 2);
}

static SOMETIMES_SLOW: Chaos<Error> = Chaos::new(77).latency(0.3, Duration::from_secs(1));

#[retry(hedge = "50ms", attempts = 2, chaos = SOMETIMES_SLOW)]
async fn hedged() -> Result<(), Error> {
    tokio::time::sleep(Duration::from_millis(10)).await;
    Ok(())
}

/// Hedging absorbs injected latency: a call whose first attempt drew the
/// delay is answered by its hedge after 60 ms (started at 50 ms, 10 ms
/// long), unless the hedge drew it too (1,010 ms).
#[tokio::test(start_paused = true)]
async fn a_hedge_wins_over_injected_latency() {
    let mut took = Vec::new();
    for _ in 0..100 {
        let started = tokio::time::Instant::now();
        assert_eq!(hedged().await, Ok(()));
        took.push(started.elapsed().as_millis());
    }
    let count = |ms| took.iter().filter(|t| **t == ms).count();
    let (fast, rescued, both_slow) = (count(10), count(60), count(1010));
    assert_eq!(fast + rescued + both_slow, 100, "{took:?}");
    assert!(rescued >= 10 && rescued > both_slow, "{took:?}");
}

/// Switched off, a `Chaos` draws nothing.
#[test]
fn a_disabled_chaos_injects_nothing() {
    static OFF: Chaos<Error> = Chaos::new(1).fault(1.0, || Error::Injected).enabled(false);
    #[retry(immediate, attempts = 2, chaos = OFF)]
    fn calm() -> Result<u8, Error> {
        Ok(1)
    }
    assert_eq!(calm(), Ok(1));
    OFF.set_enabled(true);
    assert_eq!(calm(), Err(Error::Injected));
    assert_eq!(OFF.faults(), 2);
}
