//! A configuration tested under injected faults (`chaos = CHAOS`, the
//! runtime's feature `chaos`) before production tests it: a breaker that
//! opens on an outage and closes after it, a retry budget that caps the
//! load retries add, and hedging that hides injected latency. Each part
//! runs the same calls with and without the control, on tokio's paused
//! clock and seeded chaos, so the figures it prints are the same on every
//! run (docs/guide.md quotes them); it exits with an error if a control
//! did not act. CI runs it:
//!
//! ```text
//! cargo run -p backoff-workspace-tests --example chaos
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use backoff_runtime::{Chaos, CircuitBreaker, CircuitOpen, CircuitState, RetryBudget, retry};
use tokio::time::Instant;

#[derive(Debug)]
enum Error {
    Unavailable,
    Open,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

/// Attempts whose body ran, per part (with the faults injected, which
/// stand for requests that failed, the load on the dependency).
static SENT: AtomicU64 = AtomicU64::new(0);

/// The requests of a part: the bodies that ran and the faults injected.
fn requests(chaos: &Chaos<Error>) -> u64 {
    SENT.swap(0, Ordering::Relaxed) + chaos.faults()
}

/// Hedges started.
static HEDGES: AtomicU64 = AtomicU64::new(0);

// 1. An outage: every attempt fails for a while.

static OUTAGE: Chaos<Error> = Chaos::new(1).fault(1.0, || Error::Unavailable);
static OUTAGE_BARE: Chaos<Error> = Chaos::new(1).fault(1.0, || Error::Unavailable);
static BREAKER: CircuitBreaker =
    CircuitBreaker::new(5, 1, Duration::from_secs(1)).named("inventory");

#[retry(exponential(base = "50ms", max = "1s"), attempts = 4, circuit = BREAKER, chaos = OUTAGE)]
async fn guarded() -> Result<(), Error> {
    SENT.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

#[retry(exponential(base = "50ms", max = "1s"), attempts = 4, chaos = OUTAGE_BARE)]
async fn bare() -> Result<(), Error> {
    SENT.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// 200 calls, one every 100 ms (or at once, if the last took longer);
/// the first 100 under the outage.
async fn outage(
    call: impl AsyncFn() -> Result<(), Error>,
    chaos: &Chaos<Error>,
) -> (u64, u64, u64) {
    let (mut attempts_failed, mut refused, mut ok) = (0, 0, 0);
    let start = Instant::now();
    for i in 0..200u64 {
        tokio::time::sleep_until(start + Duration::from_millis(100 * i)).await;
        chaos.set_enabled(i < 100);
        match call().await {
            Ok(()) => ok += 1,
            Err(Error::Open) => refused += 1,
            Err(Error::Unavailable) => attempts_failed += 1,
        }
    }
    (ok, attempts_failed, refused)
}

// 2. A flaky dependency: half the attempts fail, for every call.

static FLAKY: Chaos<Error> = Chaos::new(2).fault(0.5, || Error::Unavailable);
static FLAKY_BARE: Chaos<Error> = Chaos::new(2).fault(0.5, || Error::Unavailable);
static BUDGET: RetryBudget = RetryBudget::new(20, 0.1).named("inventory");

#[retry(immediate, attempts = 5, budget = BUDGET, chaos = FLAKY)]
async fn budgeted() -> Result<(), Error> {
    SENT.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

#[retry(immediate, attempts = 5, chaos = FLAKY_BARE)]
async fn unbudgeted() -> Result<(), Error> {
    SENT.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

// 3. A slow tail: 5 % of attempts answer 2 s late, the others in 20 ms.

static TAIL: Chaos<Error> = Chaos::new(3).latency(0.05, Duration::from_secs(2));
static TAIL_BARE: Chaos<Error> = Chaos::new(3).latency(0.05, Duration::from_secs(2));

#[retry(hedge = "100ms", attempts = 2, chaos = TAIL,
    on_hedge = |_: &backoff_runtime::RetryEvent| { HEDGES.fetch_add(1, Ordering::Relaxed); })]
async fn hedged() -> Result<(), Error> {
    SENT.fetch_add(1, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(20)).await;
    Ok(())
}

#[retry(immediate, attempts = 2, chaos = TAIL_BARE)]
async fn unhedged() -> Result<(), Error> {
    SENT.fetch_add(1, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(20)).await;
    Ok(())
}

/// The p50, p99 and max of 1,000 calls' times, in ms.
async fn latencies(call: impl AsyncFn() -> Result<(), Error>) -> [u128; 3] {
    let mut took = Vec::new();
    for _ in 0..1_000 {
        let start = Instant::now();
        let _ = call().await;
        took.push(start.elapsed().as_millis());
    }
    took.sort_unstable();
    [took[499], took[989], took[999]]
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() -> Result<(), String> {
    println!("1. 200 calls, one per 100 ms; the first 100 meet an outage (every attempt fails)");
    let (ok, failed, refused) = outage(guarded, &OUTAGE).await;
    let with_breaker = requests(&OUTAGE);
    println!(
        "   breaker (5 failures, open 1 s): {ok} ok, {failed} failed, {refused} refused; \
         {with_breaker} requests; {:?} at the end",
        BREAKER.state()
    );
    let (ok_bare, failed_bare, _) = outage(bare, &OUTAGE_BARE).await;
    let without = requests(&OUTAGE_BARE);
    println!(
        "   no breaker:                     {ok_bare} ok, {failed_bare} failed; {without} requests"
    );

    println!("2. 1,000 calls of up to 5 attempts; half the attempts fail");
    let mut gave_up = 0;
    for _ in 0..1_000 {
        gave_up += u32::from(budgeted().await.is_err());
    }
    let budgeted_sent = requests(&FLAKY);
    let mut gave_up_bare = 0;
    for _ in 0..1_000 {
        gave_up_bare += u32::from(unbudgeted().await.is_err());
    }
    let unbudgeted_sent = requests(&FLAKY_BARE);
    println!(
        "   budget (20 tokens, 0.1 per success): {budgeted_sent} requests, {gave_up} calls failed"
    );
    println!(
        "   no budget:                           {unbudgeted_sent} requests, {gave_up_bare} calls failed"
    );

    println!("3. 1,000 calls; 5 % of attempts answer 2 s late, the rest in 20 ms");
    let [p50, p99, max] = latencies(hedged).await;
    let hedges = HEDGES.load(Ordering::Relaxed);
    println!("   hedge after 100 ms: p50 {p50} ms, p99 {p99} ms, max {max} ms; {hedges} hedges");
    let [p50_bare, p99_bare, max_bare] = latencies(unhedged).await;
    println!("   no hedge:           p50 {p50_bare} ms, p99 {p99_bare} ms, max {max_bare} ms");

    // Each control acted.
    let checks = [
        (
            with_breaker * 2 < without,
            "the breaker spared the dependency",
        ),
        (
            BREAKER.state() == CircuitState::Closed,
            "the breaker closed after the outage",
        ),
        (
            ok + 10 >= ok_bare,
            "the breaker refused few calls after the outage",
        ),
        (
            budgeted_sent * 3 < unbudgeted_sent * 2,
            "the budget capped the retries",
        ),
        (p99 * 5 < p99_bare, "hedging cut the p99"),
        (hedges < 100, "hedging added few requests"),
    ];
    for (held, what) in checks {
        if !held {
            return Err(format!("not so: {what}"));
        }
    }
    Ok(())
}
