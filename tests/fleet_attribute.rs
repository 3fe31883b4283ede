//! Integration tests of the attribute's fleet-level arguments, as SPEC.md
//! ("Beyond retrying one call") describes them:
//!
//! - `throttled(STRATEGY, attempts = N)`: errors that `when` classifies
//!   `Decision::Throttled` follow the second schedule's delays and attempt
//!   limit; other retried errors keep the main ones, each kind counting its
//!   own failures; `Stop` stops at once;
//!   `jitter` applies to both schedules;
//! - `budget = STATIC`: one token bucket shared by every call (and every
//!   function) naming it; a retry spends a token, a success refills
//!   `token_ratio`; with none left a call returns its error at once; shared
//!   correctly across threads;
//! - `circuit = STATIC`: opens after `failure_threshold` consecutive failed
//!   attempts; while open the body does not run and the call returns
//!   `E::from(CircuitOpen)`; after `open_for` one trial call at a time;
//!   `success_threshold` successful trials close it; an error `when` calls
//!   `Stop` counts as a success;
//! - `attempt_timeout = D`: each attempt of an `async fn` is cancelled after
//!   D and fails with `E::from(Elapsed)`, then goes through `when` and the
//!   policy like any error;
//! - the future stays `Send` with all of them (spawned on a multi-thread
//!   runtime).
//!
//! Sleeps of plain fns are observed by injecting `sleep = record`; async fns
//! run on tokio's paused clock and their virtual elapsed times are checked
//! exactly. Every `static` budget and breaker is declared inside the one test
//! that uses it (tests run in parallel).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use backoff_runtime::{
    CircuitBreaker, CircuitOpen, CircuitState, Decision, Elapsed, RetryBudget, RetryEvent, retry,
};
use backoff_workspace_tests::{block_on_paused, paused_runtime};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// The error of every function under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum E {
    /// Retried on the main schedule.
    Transient,
    /// Retried on the throttled schedule.
    Throttled,
    /// Never retried.
    Permanent,
    /// A call refused by an open breaker.
    Open,
    /// An attempt cut by `attempt_timeout`.
    TimedOut,
}

impl From<CircuitOpen> for E {
    fn from(_: CircuitOpen) -> Self {
        E::Open
    }
}

impl From<Elapsed> for E {
    fn from(_: Elapsed) -> Self {
        E::TimedOut
    }
}

use E::{Permanent, Throttled, Transient};

thread_local! {
    /// The outcomes of the next calls of [`step`], in order.
    static SCRIPT: RefCell<VecDeque<Result<u32, E>>> = const { RefCell::new(VecDeque::new()) };
    /// Bodies run since [`script`].
    static CALLS: Cell<u32> = const { Cell::new(0) };
    /// Calls of [`classify`] since [`script`].
    static ASKED: Cell<u32> = const { Cell::new(0) };
    /// Runs of [`slow_step`] started since [`script`].
    static STARTED: Cell<u32> = const { Cell::new(0) };
    /// Sleeps recorded by [`record`] since [`script`].
    static SLEEPS: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
}

/// Starts a test on this thread: the bodies will return `outcomes` in order,
/// then `Ok(call number)` once the script runs out.
fn script(outcomes: impl IntoIterator<Item = Result<u32, E>>) {
    SCRIPT.set(outcomes.into_iter().collect());
    CALLS.set(0);
    ASKED.set(0);
    STARTED.set(0);
    SLEEPS.take();
}

/// `n` failures with `e`.
fn fails(n: usize, e: E) -> Vec<Result<u32, E>> {
    vec![Err(e); n]
}

/// One run of a body: the next scripted outcome.
fn step() -> Result<u32, E> {
    let n = CALLS.get() + 1;
    CALLS.set(n);
    SCRIPT.with_borrow_mut(|s| s.pop_front()).unwrap_or(Ok(n))
}

/// Bodies run since [`script`].
fn calls() -> u32 {
    CALLS.get()
}

/// Calls of `when` since [`script`].
fn asked() -> u32 {
    ASKED.get()
}

/// The injected sleep of plain fns: records instead of sleeping.
fn record(d: Duration) {
    SLEEPS.with_borrow_mut(|s| s.push(d));
}

/// The sleeps recorded since [`script`] (and clears them).
fn sleeps() -> Vec<Duration> {
    SLEEPS.take()
}

/// `Transient` and `TimedOut` are retried, `Throttled` is throttled,
/// `Permanent` and `Open` stop.
fn classify(e: &E) -> Decision {
    ASKED.set(ASKED.get() + 1);
    match e {
        E::Transient | E::TimedOut => Decision::Retry,
        E::Throttled => Decision::Throttled,
        E::Permanent | E::Open => Decision::Stop,
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// A budget's tokens, in thousandths (its resolution).
fn milli(b: &RetryBudget) -> i64 {
    (b.tokens() * 1000.0).round() as i64
}

/// Virtual time since `start`.
fn since(start: tokio::time::Instant) -> Duration {
    start.elapsed()
}

// ---------------------------------------------------------------------------
// throttled(STRATEGY, attempts = N)
// ---------------------------------------------------------------------------

/// Transient errors: exponential from 100 ms, 3 attempts. Throttled errors:
/// exponential from 500 ms up to 4 s, 6 attempts. No jitter on either.
#[retry(
    exponential(base = "100ms", max = "1s"),
    attempts = 3,
    jitter = "none",
    throttled(exponential(base = "500ms", max = "4s"), attempts = 6),
    when = classify,
    sleep = record
)]
fn adaptive() -> Result<u32, E> {
    step()
}

#[test]
fn throttled_errors_use_the_second_schedule_and_its_limit() {
    script(fails(10, Throttled));
    assert_eq!(adaptive(), Err(Throttled));
    assert_eq!(calls(), 6, "the throttled limit: 6 attempts");
    assert_eq!(sleeps(), [ms(500), ms(1000), ms(2000), ms(4000), ms(4000)]);
}

#[test]
fn transient_errors_keep_the_main_schedule_and_its_limit() {
    script(fails(10, Transient));
    assert_eq!(adaptive(), Err(Transient));
    assert_eq!(calls(), 3, "the main limit: 3 attempts");
    assert_eq!(sleeps(), [ms(100), ms(200)]);
}

#[test]
fn each_schedule_counts_its_own_retries() {
    script([Err(Throttled), Err(Transient), Err(Throttled)]);
    assert_eq!(adaptive(), Ok(4));
    assert_eq!(sleeps(), [ms(500), ms(100), ms(1000)]);

    script([
        Err(Transient),
        Err(Transient),
        Err(Throttled),
        Err(Throttled),
    ]);
    assert_eq!(adaptive(), Ok(5));
    assert_eq!(
        sleeps(),
        [ms(100), ms(200), ms(500), ms(1000)],
        "the first throttled retry waits the throttled base, whatever came before"
    );
}

/// Two kinds, each counting its own failures: throttled ones count
/// against the throttled limit only, the others against the main one only.
#[test]
fn each_limit_counts_its_own_kinds_failures() {
    // A transient error after three throttled ones is the first transient
    // failure: within the main limit of 3.
    script([
        Err(Throttled),
        Err(Throttled),
        Err(Throttled),
        Err(Transient),
    ]);
    assert_eq!(adaptive(), Ok(5));
    assert_eq!(sleeps(), [ms(500), ms(1000), ms(2000), ms(100)]);

    // The third transient one reaches it.
    script([
        Err(Throttled),
        Err(Throttled),
        Err(Throttled),
        Err(Transient),
        Err(Transient),
        Err(Transient),
    ]);
    assert_eq!(adaptive(), Err(Transient));
    assert_eq!(calls(), 6);
    assert_eq!(sleeps(), [ms(500), ms(1000), ms(2000), ms(100), ms(200)]);

    // Four throttled errors after two transient ones: within 6 throttled.
    script([
        Err(Transient),
        Err(Transient),
        Err(Throttled),
        Err(Throttled),
        Err(Throttled),
        Err(Throttled),
    ]);
    assert_eq!(adaptive(), Ok(7));
    assert_eq!(
        sleeps(),
        [ms(100), ms(200), ms(500), ms(1000), ms(2000), ms(4000)]
    );

    // The sixth throttled one ends the call: 2 + 6 attempts.
    let mut all = vec![Err(Transient), Err(Transient)];
    all.extend(fails(6, Throttled));
    script(all);
    assert_eq!(adaptive(), Err(Throttled));
    assert_eq!(calls(), 8);
    assert_eq!(
        sleeps(),
        [
            ms(100),
            ms(200),
            ms(500),
            ms(1000),
            ms(2000),
            ms(4000),
            ms(4000)
        ]
    );
}

#[test]
fn permanent_errors_stop_at_once_on_either_schedule() {
    script([Err(Permanent)]);
    assert_eq!(adaptive(), Err(Permanent));
    assert_eq!((calls(), sleeps()), (1, vec![]));

    script([Err(Throttled), Err(Throttled), Err(Permanent)]);
    assert_eq!(adaptive(), Err(Permanent));
    assert_eq!((calls(), sleeps()), (3, vec![ms(500), ms(1000)]));
}

#[test]
fn throttled_attempts_may_be_unlimited() {
    #[retry(
        constant("10ms"),
        attempts = 2,
        jitter = "none",
        throttled(constant("1s"), attempts = unlimited),
        when = classify,
        sleep = record
    )]
    fn patient() -> Result<u32, E> {
        step()
    }

    script(fails(100, Throttled));
    assert_eq!(patient(), Ok(101));
    assert_eq!(sleeps(), vec![secs(1); 100]);

    script(fails(100, Transient));
    assert_eq!(patient(), Err(Transient));
    assert_eq!(sleeps(), [ms(10)]);
}

#[test]
fn throttled_without_attempts_allows_the_default_three() {
    // Not spelled out by SPEC.md: an omitted limit is the attribute's
    // default, 3 attempts (not the main `attempts`). Pinned so that a change
    // is deliberate.
    #[retry(
        constant("10ms"),
        attempts = 10,
        jitter = "none",
        throttled(constant("1s")),
        when = classify,
        sleep = record
    )]
    fn defaulted() -> Result<u32, E> {
        step()
    }

    script(fails(100, Throttled));
    assert_eq!(defaulted(), Err(Throttled));
    assert_eq!((calls(), sleeps()), (3, vec![secs(1), secs(1)]));
}

#[test]
fn throttled_decisions_without_a_throttled_schedule_retry_on_the_main_one() {
    #[retry(
        exponential(base = "100ms"),
        attempts = 4,
        jitter = "none",
        when = classify,
        sleep = record
    )]
    fn plain() -> Result<u32, E> {
        step()
    }

    script([
        Err(Throttled),
        Err(Transient),
        Err(Throttled),
        Err(Throttled),
    ]);
    assert_eq!(plain(), Err(Throttled));
    assert_eq!(calls(), 4);
    assert_eq!(sleeps(), [ms(100), ms(200), ms(400)], "one shared schedule");
}

#[test]
fn jitter_applies_to_both_schedules() {
    #[retry(
        constant("1s"),
        attempts = 10,
        jitter = "equal",
        throttled(constant("4s"), attempts = 10),
        when = classify,
        sleep = record
    )]
    fn equal() -> Result<u32, E> {
        step()
    }

    let (mut main, mut throttled) = (Vec::new(), Vec::new());
    for _ in 0..50 {
        script([Err(Transient), Err(Throttled)]);
        assert_eq!(equal(), Ok(3));
        let s = sleeps();
        main.push(s[0]);
        throttled.push(s[1]);
    }
    assert!(
        main.iter().all(|d| (ms(500)..=secs(1)).contains(d)),
        "{main:?}"
    );
    assert!(
        throttled.iter().all(|d| (secs(2)..=secs(4)).contains(d)),
        "{throttled:?}"
    );
    assert!(main.iter().any(|d| *d != main[0]), "the main delays vary");
    assert!(throttled.iter().any(|d| *d != throttled[0]), "so do these");
}

#[test]
fn without_jitter_both_schedules_default_to_full_jitter() {
    #[retry(
        constant("1s"),
        attempts = 10,
        throttled(constant("4s"), attempts = 10),
        when = classify,
        sleep = record
    )]
    fn full() -> Result<u32, E> {
        step()
    }

    let (mut main, mut throttled) = (Vec::new(), Vec::new());
    for _ in 0..50 {
        script([Err(Transient), Err(Throttled)]);
        assert_eq!(full(), Ok(3));
        let s = sleeps();
        main.push(s[0]);
        throttled.push(s[1]);
    }
    assert!(main.iter().all(|d| *d <= secs(1)), "{main:?}");
    assert!(throttled.iter().all(|d| *d <= secs(4)), "{throttled:?}");
    assert!(
        throttled.iter().any(|d| *d > secs(1)),
        "throttled delays are drawn below 4 s, not 1 s: {throttled:?}"
    );
    assert!(main.iter().any(|d| *d != main[0]));
    assert!(throttled.iter().any(|d| *d != throttled[0]));
}

#[test]
fn a_decorrelated_throttled_schedule_takes_no_extra_jitter() {
    // `jitter` cannot apply to `decorrelated`, which is random by itself; the
    // main schedule still gets it.
    #[retry(
        constant("1s"),
        attempts = 20,
        jitter = "equal",
        throttled(decorrelated(base = "100ms", max = "1s"), attempts = 20),
        when = classify,
        sleep = record
    )]
    fn mixed() -> Result<u32, E> {
        step()
    }

    for _ in 0..20 {
        script(fails(10, Throttled));
        assert_eq!(mixed(), Ok(11));
        let s = sleeps();
        assert_eq!(s.len(), 10);
        // uniform(base, 3 · previous), capped: never below the base (equal
        // jitter on top would go down to half of it).
        assert!(s.iter().all(|d| (ms(100)..=secs(1)).contains(d)), "{s:?}");
    }
}

#[test]
fn on_retry_sees_the_throttled_delays() {
    thread_local!(static SEEN: RefCell<Vec<(E, u32, Duration)>> = const { RefCell::new(Vec::new()) });
    #[retry(
        constant("100ms"),
        attempts = 5,
        jitter = "none",
        throttled(constant("3s"), attempts = 5),
        when = classify,
        on_retry = |e: &E, ev: &RetryEvent| SEEN.with_borrow_mut(|s| s.push((*e, ev.attempt, ev.delay))),
        sleep = record
    )]
    fn observed() -> Result<u32, E> {
        step()
    }

    script([Err(Throttled), Err(Transient)]);
    assert_eq!(observed(), Ok(3));
    assert_eq!(
        SEEN.take(),
        [(Throttled, 1, secs(3)), (Transient, 2, ms(100))]
    );
    assert_eq!(sleeps(), [secs(3), ms(100)]);
}

#[tokio::test(start_paused = true)]
async fn async_throttled_retries_sleep_the_throttled_delays() {
    #[retry(
        exponential(base = "100ms"),
        attempts = 3,
        jitter = "none",
        throttled(constant("2s"), attempts = 4),
        when = classify
    )]
    async fn fetch() -> Result<u32, E> {
        step()
    }

    script([Err(Throttled), Err(Transient), Err(Throttled)]);
    let start = tokio::time::Instant::now();
    assert_eq!(fetch().await, Ok(4));
    assert_eq!(since(start), ms(2000 + 100 + 2000));

    script(fails(10, Throttled));
    let start = tokio::time::Instant::now();
    assert_eq!(fetch().await, Err(Throttled));
    assert_eq!((calls(), since(start)), (4, secs(6)));
}

// ---------------------------------------------------------------------------
// budget = STATIC
// ---------------------------------------------------------------------------

#[test]
fn an_empty_budget_stops_retries_at_once() {
    static BUDGET: RetryBudget = RetryBudget::new(2, 0.0);
    #[retry(immediate, attempts = 10, budget = BUDGET, sleep = record)]
    fn call() -> Result<u32, E> {
        step()
    }

    script(fails(100, Transient));
    assert_eq!(call(), Err(Transient));
    assert_eq!((calls(), sleeps().len()), (3, 2), "two tokens: two retries");
    assert_eq!(BUDGET.tokens(), 0.0);

    script(fails(100, Transient));
    assert_eq!(call(), Err(Transient));
    assert_eq!((calls(), sleeps().len()), (1, 0), "no token: no retry");

    script([Err(Permanent)]);
    assert_eq!(call(), Err(Permanent), "the last error, unchanged");
}

#[test]
fn a_budget_is_shared_by_every_function_naming_it() {
    static SHARED: RetryBudget = RetryBudget::new(3, 0.0);
    #[retry(immediate, attempts = 3, budget = SHARED, sleep = record)]
    fn first() -> Result<u32, E> {
        step()
    }
    #[retry(constant("1s"), attempts = 5, budget = SHARED, sleep = record)]
    fn second() -> Result<u32, E> {
        step()
    }

    script(fails(100, Transient));
    assert_eq!(first(), Err(Transient));
    assert_eq!(calls(), 3);
    assert_eq!(SHARED.tokens(), 1.0);

    script(fails(100, Transient));
    assert_eq!(second(), Err(Transient));
    assert_eq!(calls(), 2, "one token left for the other function");
    assert_eq!(sleeps().len(), 1);
    assert_eq!(SHARED.tokens(), 0.0);
}

#[test]
fn successes_refill_the_budget_by_the_ratio_up_to_its_size() {
    static BUDGET: RetryBudget = RetryBudget::new(2, 0.5);
    #[retry(immediate, attempts = 10, budget = BUDGET, sleep = record)]
    fn call() -> Result<u32, E> {
        step()
    }

    script(fails(100, Transient));
    assert_eq!(call(), Err(Transient));
    assert_eq!((calls(), BUDGET.tokens()), (3, 0.0));

    // Two successes: one token.
    for _ in 0..2 {
        script([]);
        assert_eq!(call(), Ok(1));
    }
    assert_eq!(BUDGET.tokens(), 1.0);
    script(fails(100, Transient));
    assert_eq!(call(), Err(Transient));
    assert_eq!(calls(), 2, "one retry");

    // One success: half a token is not a retry.
    script([]);
    assert_eq!(call(), Ok(1));
    assert_eq!(BUDGET.tokens(), 0.5);
    script(fails(100, Transient));
    assert_eq!(call(), Err(Transient));
    assert_eq!(calls(), 1);

    // Many successes: capped at the bucket's size.
    for _ in 0..10 {
        script([]);
        assert_eq!(call(), Ok(1));
    }
    assert_eq!(BUDGET.tokens(), 2.0);
}

#[test]
fn a_call_that_retries_then_succeeds_spends_then_deposits() {
    static BUDGET: RetryBudget = RetryBudget::new(10, 0.25);
    #[retry(immediate, attempts = 10, budget = BUDGET, sleep = record)]
    fn call() -> Result<u32, E> {
        step()
    }

    script([Err(Transient), Err(Transient)]);
    assert_eq!(call(), Ok(3));
    assert_eq!(BUDGET.tokens(), 10.0 - 2.0 + 0.25);
}

#[test]
fn only_granted_retries_spend_tokens() {
    static BUDGET: RetryBudget = RetryBudget::new(10, 0.0);
    #[retry(
        immediate,
        attempts = 2,
        throttled(immediate, attempts = 3),
        when = classify,
        budget = BUDGET,
        sleep = record
    )]
    fn call() -> Result<u32, E> {
        step()
    }

    // The first attempt is free.
    script([Err(Permanent)]);
    assert_eq!(call(), Err(Permanent));
    assert_eq!(BUDGET.tokens(), 10.0, "a stop spends nothing");

    // Out of attempts: the failure that ends the call spends nothing.
    script(fails(100, Transient));
    assert_eq!(call(), Err(Transient));
    assert_eq!(calls(), 2);
    assert_eq!(BUDGET.tokens(), 9.0, "one retry, one token");

    // Throttled retries spend too.
    script(fails(100, Throttled));
    assert_eq!(call(), Err(Throttled));
    assert_eq!(calls(), 3);
    assert_eq!(BUDGET.tokens(), 7.0);
}

#[test]
fn a_budget_bounds_the_retries_of_concurrent_calls_exactly() {
    // 8 threads × 50 calls, each retrying up to 9 times, against 100 tokens
    // and no successes: exactly 100 retries happen in all.
    static BUDGET: RetryBudget = RetryBudget::new(100, 0.5);
    static RUNS: AtomicU32 = AtomicU32::new(0);
    fn yield_now(_: Duration) {
        std::thread::yield_now();
    }
    #[retry(immediate, attempts = 10, budget = BUDGET, sleep = yield_now)]
    fn down() -> Result<(), E> {
        RUNS.fetch_add(1, Ordering::Relaxed);
        Err(Transient)
    }
    #[retry(immediate, attempts = 10, budget = BUDGET)]
    fn up() -> Result<(), E> {
        Ok(())
    }

    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..50 {
                    assert_eq!(down(), Err(Transient));
                }
            });
        }
    });
    assert_eq!(RUNS.load(Ordering::Relaxed), 8 * 50 + 100);
    assert_eq!(BUDGET.tokens(), 0.0);

    // 8 threads × 20 successes refill 160 × 0.5 = 80 tokens, none lost.
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..20 {
                    assert_eq!(up(), Ok(()));
                }
            });
        }
    });
    assert_eq!(BUDGET.tokens(), 80.0);
}

#[tokio::test(start_paused = true)]
async fn an_async_call_with_an_empty_budget_returns_without_sleeping() {
    static BUDGET: RetryBudget = RetryBudget::new(1, 0.0);
    #[retry(constant("1s"), jitter = "none", attempts = 5, budget = BUDGET)]
    async fn call() -> Result<u32, E> {
        step()
    }

    script(fails(100, Transient));
    let start = tokio::time::Instant::now();
    assert_eq!(call().await, Err(Transient));
    assert_eq!((calls(), since(start)), (2, secs(1)));

    script(fails(100, Transient));
    let start = tokio::time::Instant::now();
    assert_eq!(call().await, Err(Transient));
    assert_eq!((calls(), since(start)), (1, Duration::ZERO));
}

// ---------------------------------------------------------------------------
// circuit = STATIC
// ---------------------------------------------------------------------------

#[test]
fn a_breaker_opens_after_the_threshold_of_consecutive_failed_calls() {
    static BREAKER: CircuitBreaker = CircuitBreaker::new(3, 1, Duration::from_secs(3600));
    #[retry(attempts = 1, when = classify, circuit = BREAKER)]
    fn call() -> Result<u32, E> {
        step()
    }

    script(fails(100, Transient));
    for _ in 0..2 {
        assert_eq!(call(), Err(Transient));
        assert_eq!(BREAKER.state(), CircuitState::Closed);
    }
    assert_eq!(call(), Err(Transient));
    assert_eq!(BREAKER.state(), CircuitState::Open);
    assert_eq!((calls(), asked()), (3, 3));

    // Open: the body does not run, `when` is not asked, the error is
    // `E::from(CircuitOpen)`.
    for _ in 0..5 {
        assert_eq!(call(), Err(E::Open));
    }
    assert_eq!((calls(), asked()), (3, 3));
}

#[test]
fn failed_attempts_of_one_call_count_toward_the_threshold() {
    static BREAKER: CircuitBreaker = CircuitBreaker::new(3, 1, Duration::from_secs(3600));
    #[retry(constant("1s"), jitter = "none", attempts = 10, circuit = BREAKER, sleep = record)]
    fn call() -> Result<u32, E> {
        step()
    }

    script(fails(100, Transient));
    assert_eq!(
        call(),
        Err(Transient),
        "the failure that opens it ends the call with its real error"
    );
    assert_eq!(calls(), 3, "the third failure opened it");
    // No sleep before a retry the open breaker would refuse.
    assert_eq!(sleeps(), [secs(1); 2]);
    assert_eq!(BREAKER.state(), CircuitState::Open);
    assert_eq!(call(), Err(E::Open), "the next call fails fast");
    assert_eq!(calls(), 3);
}

#[test]
fn a_success_resets_the_consecutive_failures() {
    static BREAKER: CircuitBreaker = CircuitBreaker::new(2, 1, Duration::from_secs(3600));
    #[retry(attempts = 1, circuit = BREAKER)]
    fn call() -> Result<u32, E> {
        step()
    }

    script([Err(Transient), Ok(0), Err(Transient), Ok(0), Err(Transient)]);
    for expected in [Err(Transient), Ok(0), Err(Transient), Ok(0), Err(Transient)] {
        assert_eq!(call(), expected);
        assert_eq!(BREAKER.state(), CircuitState::Closed);
    }
    // The success that ends a retried call resets them too.
    #[retry(immediate, attempts = 2, circuit = BREAKER, sleep = record)]
    fn retried() -> Result<u32, E> {
        step()
    }
    script([Ok(0), Err(Transient), Ok(7), Err(Transient), Err(Transient)]);
    assert_eq!(call(), Ok(0));
    assert_eq!(retried(), Ok(7));
    assert_eq!(call(), Err(Transient));
    assert_eq!(
        BREAKER.state(),
        CircuitState::Closed,
        "one failure since the success"
    );
    assert_eq!(call(), Err(Transient));
    assert_eq!(BREAKER.state(), CircuitState::Open);
}

#[test]
fn an_error_classified_stop_counts_as_a_success() {
    // The service answered (a 404, a validation error): not a sign of ill
    // health. See `RetryState`: a `Decision::Stop` reports success.
    static BREAKER: CircuitBreaker = CircuitBreaker::new(2, 1, Duration::from_secs(3600));
    #[retry(attempts = 5, when = classify, circuit = BREAKER, sleep = record)]
    fn call() -> Result<u32, E> {
        step()
    }

    script([Err(Transient), Err(Permanent)]);
    assert_eq!(call(), Err(Permanent), "the error is returned unchanged");
    assert_eq!(calls(), 2);
    assert_eq!(BREAKER.state(), CircuitState::Closed);

    script([Err(Transient), Err(Transient)]);
    assert_eq!(
        call(),
        Err(Transient),
        "two consecutive failures open it, and end the call"
    );
    assert_eq!(calls(), 2);
    assert_eq!(BREAKER.state(), CircuitState::Open);
}

#[test]
fn throttled_errors_count_as_failures() {
    static BREAKER: CircuitBreaker = CircuitBreaker::new(2, 1, Duration::from_secs(3600));
    #[retry(
        immediate,
        attempts = 1,
        throttled(immediate, attempts = 1),
        when = classify,
        circuit = BREAKER
    )]
    fn call() -> Result<u32, E> {
        step()
    }

    script([Err(Throttled), Err(Throttled)]);
    assert_eq!(call(), Err(Throttled));
    assert_eq!(call(), Err(Throttled));
    assert_eq!(BREAKER.state(), CircuitState::Open);
}

#[test]
fn with_open_for_zero_the_next_call_is_the_trial() {
    // A plain fn reads the system clock; `open_for = 0` needs no waiting.
    static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::ZERO);
    #[retry(attempts = 1, circuit = BREAKER)]
    fn call() -> Result<u32, E> {
        step()
    }

    script([Err(Transient), Err(Transient)]);
    assert_eq!(call(), Err(Transient));
    assert_eq!(BREAKER.state(), CircuitState::Open);
    assert_eq!(call(), Err(Transient), "the trial ran, and failed");
    assert_eq!(BREAKER.state(), CircuitState::Open);
    assert_eq!(call(), Ok(3), "another trial, which succeeds");
    assert_eq!(BREAKER.state(), CircuitState::Closed);
}

#[test]
fn after_open_for_one_trial_call_and_success_threshold_successes_close_it() {
    static BREAKER: CircuitBreaker = CircuitBreaker::new(2, 2, Duration::from_secs(30));
    #[retry(attempts = 1, circuit = BREAKER)]
    async fn call(work: Duration) -> Result<u32, E> {
        tokio::time::sleep(work).await;
        step()
    }

    block_on_paused(async {
        script([Err(Transient), Err(Transient)]);
        assert_eq!(call(ms(0)).await, Err(Transient));
        assert_eq!(call(ms(0)).await, Err(Transient));
        assert_eq!(BREAKER.state(), CircuitState::Open);

        // Open for 30 s of the call's (paused, virtual) clock.
        tokio::time::sleep(secs(30) - ms(1)).await;
        assert_eq!(call(ms(0)).await, Err(E::Open));
        assert_eq!(calls(), 2, "not run while open");
        tokio::time::sleep(ms(1)).await;

        // Half-open: one trial at a time; the others fail fast meanwhile.
        let (trial, other) = tokio::join!(call(secs(1)), async {
            tokio::task::yield_now().await;
            let refused = call(ms(0)).await;
            (refused, BREAKER.state())
        });
        assert_eq!(trial, Ok(3));
        assert_eq!(other, (Err(E::Open), CircuitState::HalfOpen));
        assert_eq!(calls(), 3);
        // One success of two: still half-open, the next call is a trial.
        assert_eq!(BREAKER.state(), CircuitState::HalfOpen);
        assert_eq!(call(ms(0)).await, Ok(4));
        assert_eq!(BREAKER.state(), CircuitState::Closed);

        // Closed again, failures counted from zero.
        script([Err(Transient)]);
        assert_eq!(call(ms(0)).await, Err(Transient));
        assert_eq!(BREAKER.state(), CircuitState::Closed);
    });
}

#[test]
fn a_failed_trial_reopens_the_breaker_for_open_for_from_then() {
    static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 2, Duration::from_secs(10));
    #[retry(attempts = 1, circuit = BREAKER)]
    async fn call(work: Duration) -> Result<u32, E> {
        tokio::time::sleep(work).await;
        step()
    }

    block_on_paused(async {
        script([Err(Transient), Err(Transient), Ok(0), Err(Transient)]);
        assert_eq!(call(ms(0)).await, Err(Transient));
        tokio::time::sleep(secs(10)).await;

        // The trial takes 3 s and fails: open again, timed from its failure.
        assert_eq!(call(secs(3)).await, Err(Transient));
        assert_eq!(BREAKER.state(), CircuitState::Open);
        tokio::time::sleep(secs(10) - ms(1)).await;
        assert_eq!(call(ms(0)).await, Err(E::Open));
        tokio::time::sleep(ms(1)).await;

        // A success below the threshold, then a failure: open again, and
        // the successes start over.
        assert_eq!(call(ms(0)).await, Ok(0));
        assert_eq!(BREAKER.state(), CircuitState::HalfOpen);
        assert_eq!(call(ms(0)).await, Err(Transient));
        assert_eq!(BREAKER.state(), CircuitState::Open);
        tokio::time::sleep(secs(10)).await;
        script([]);
        assert_eq!(call(ms(0)).await, Ok(1));
        assert_eq!(BREAKER.state(), CircuitState::HalfOpen, "1 of 2 successes");
        assert_eq!(call(ms(0)).await, Ok(2));
        assert_eq!(BREAKER.state(), CircuitState::Closed);
    });
}

#[test]
fn a_trial_that_fails_is_not_retried_past_the_reopened_breaker() {
    static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(30));
    #[retry(constant("1s"), jitter = "none", attempts = 3, circuit = BREAKER)]
    async fn call() -> Result<u32, E> {
        step()
    }

    block_on_paused(async {
        script(fails(100, Transient));
        let start = tokio::time::Instant::now();
        assert_eq!(
            call().await,
            Err(Transient),
            "the failure opened it: no retry that would only fail fast"
        );
        assert_eq!((calls(), since(start)), (1, secs(0)));
        tokio::time::sleep(secs(30)).await;
        let start = tokio::time::Instant::now();
        assert_eq!(
            call().await,
            Err(Transient),
            "the trial failed and reopened it: the call ends with its error"
        );
        assert_eq!((calls(), since(start)), (2, secs(0)));
        assert_eq!(call().await, Err(E::Open), "and the next call fails fast");
    });
}

#[test]
fn a_retry_that_sleeps_past_open_for_is_the_trial() {
    static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(30));
    #[retry(constant("1m"), jitter = "none", attempts = 3, circuit = BREAKER)]
    async fn call() -> Result<u32, E> {
        step()
    }

    block_on_paused(async {
        script([Err(Transient)]);
        let start = tokio::time::Instant::now();
        assert_eq!(call().await, Ok(2));
        assert_eq!(since(start), secs(60));
        assert_eq!(BREAKER.state(), CircuitState::Closed);
    });
}

#[test]
fn timed_out_attempts_count_as_failures() {
    static BREAKER: CircuitBreaker = CircuitBreaker::new(2, 1, Duration::from_secs(3600));
    #[retry(immediate, attempts = 5, circuit = BREAKER, attempt_timeout = "1s")]
    async fn call() -> Result<u32, E> {
        tokio::time::sleep(secs(10)).await;
        step()
    }

    block_on_paused(async {
        script([]);
        let start = tokio::time::Instant::now();
        assert_eq!(call().await, Err(E::TimedOut), "the last real error");
        assert_eq!(since(start), secs(2), "two timeouts opened it");
        assert_eq!(calls(), 0, "no attempt got past its sleep");
        assert_eq!(BREAKER.state(), CircuitState::Open);
    });
}

// ---------------------------------------------------------------------------
// attempt_timeout = D
// ---------------------------------------------------------------------------

/// An async body that takes `work[i]` on its i-th run (the last entry from
/// then on), then returns the next scripted outcome.
async fn slow_step(work: &[Duration]) -> Result<u32, E> {
    let i = STARTED.get() as usize;
    STARTED.set(STARTED.get() + 1);
    tokio::time::sleep(work[i.min(work.len() - 1)]).await;
    step()
}

#[retry(constant("1s"), jitter = "none", attempts = 3, attempt_timeout = "2s")]
async fn timed(work: &[Duration]) -> Result<u32, E> {
    slow_step(work).await
}

#[tokio::test(start_paused = true)]
async fn every_attempt_is_cut_at_the_timeout() {
    script([]);
    let start = tokio::time::Instant::now();
    assert_eq!(timed(&[secs(10)]).await, Err(E::TimedOut));
    assert_eq!(since(start), secs(2 + 1 + 2 + 1 + 2));
    assert_eq!(calls(), 0, "no attempt got past its work");
}

#[tokio::test(start_paused = true)]
async fn an_attempt_within_the_timeout_is_not_cut() {
    script([]);
    let start = tokio::time::Instant::now();
    assert_eq!(timed(&[ms(1999)]).await, Ok(1));
    assert_eq!(since(start), ms(1999));
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_attempt_is_retried_per_the_policy() {
    script([]);
    let start = tokio::time::Instant::now();
    assert_eq!(timed(&[secs(5), ms(500)]).await, Ok(1));
    assert_eq!(since(start), ms(2000 + 1000 + 500));

    // An ordinary error still retries as usual in between.
    script([Err(Transient)]);
    let start = tokio::time::Instant::now();
    assert_eq!(timed(&[ms(100), secs(5), ms(100)]).await, Ok(2));
    assert_eq!(since(start), ms(100 + 1000 + 2000 + 1000 + 100));
}

#[tokio::test(start_paused = true)]
async fn timeouts_follow_an_exponential_schedule_exactly() {
    #[retry(
        exponential(base = "100ms"),
        jitter = "none",
        attempts = 4,
        attempt_timeout = "1s"
    )]
    async fn call() -> Result<u32, E> {
        tokio::time::sleep(secs(60)).await;
        step()
    }

    script([]);
    let start = tokio::time::Instant::now();
    assert_eq!(call().await, Err(E::TimedOut));
    assert_eq!(
        since(start),
        ms(1000 + 100 + 1000 + 200 + 1000 + 400 + 1000)
    );
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_error_goes_through_when() {
    fn never_on_timeout(e: &E) -> bool {
        *e != E::TimedOut
    }
    #[retry(constant("1s"), attempts = 5, when = never_on_timeout, attempt_timeout = "2s")]
    async fn call() -> Result<u32, E> {
        tokio::time::sleep(secs(10)).await;
        step()
    }

    script([]);
    let start = tokio::time::Instant::now();
    assert_eq!(call().await, Err(E::TimedOut));
    assert_eq!(since(start), secs(2));
}

#[tokio::test(start_paused = true)]
async fn the_cut_attempt_is_dropped_before_on_retry_and_the_sleep() {
    thread_local!(static LOG: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) });
    fn log(s: String) {
        LOG.with_borrow_mut(|l| l.push(s));
    }
    struct Guard(tokio::time::Instant);
    impl Drop for Guard {
        fn drop(&mut self) {
            log(format!("dropped at {:?}", self.0.elapsed()));
        }
    }

    #[retry(
        constant("1s"),
        jitter = "none",
        attempts = 2,
        attempt_timeout = "2s",
        on_retry = |e: &E, ev: &RetryEvent| log(format!("{e:?} #{} at {:?}", ev.attempt, ev.elapsed))
    )]
    async fn call(start: tokio::time::Instant) -> Result<u32, E> {
        let _guard = Guard(start);
        tokio::time::sleep(secs(10)).await;
        log("finished".into());
        Ok(0)
    }

    let start = tokio::time::Instant::now();
    assert_eq!(call(start).await, Err(E::TimedOut));
    assert_eq!(
        LOG.take(),
        [
            "dropped at 2s",
            "TimedOut #1 at 2s",
            "dropped at 5s" // 2 s, the 1 s sleep, 2 s
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn question_mark_in_a_timed_body_converts_as_usual() {
    fn parse(s: &str) -> Result<u32, E> {
        s.parse().map_err(|_| Permanent)
    }
    #[retry(attempts = 3, when = classify, attempt_timeout = "1s")]
    async fn call(s: &str) -> Result<u32, E> {
        let n = parse(s)?;
        Ok(n + 1)
    }

    script([]);
    assert_eq!(call("41").await, Ok(42));
    assert_eq!(call("x").await, Err(Permanent));
    assert_eq!(asked(), 1, "a permanent error: no retry");
}

// ---------------------------------------------------------------------------
// Everything at once: the future is `Send`
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_future_is_send_with_every_fleet_argument() {
    static BUDGET: RetryBudget = RetryBudget::new(10, 0.1);
    static BREAKER: CircuitBreaker = CircuitBreaker::new(100, 1, Duration::from_secs(3600));
    static RUNS: AtomicU32 = AtomicU32::new(0);

    fn kind(e: &E) -> Decision {
        match e {
            E::Throttled => Decision::Throttled,
            E::Permanent | E::Open => Decision::Stop,
            _ => Decision::Retry,
        }
    }

    #[retry(
        immediate,
        attempts = 3,
        throttled(constant("1ms"), attempts = 4),
        when = kind,
        budget = BUDGET,
        circuit = BREAKER,
        attempt_timeout = "20ms"
    )]
    async fn call(id: u32, work: Duration, failures: u32) -> Result<u32, E> {
        let run = RUNS.fetch_add(1, Ordering::Relaxed);
        // Hold something across an await that is `Send` but not `Sync`.
        let cell = Cell::new(id);
        tokio::time::sleep(work).await;
        if run < failures {
            return Err(E::Throttled);
        }
        Ok(cell.get())
    }

    fn spawn_checked<F>(f: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        tokio::spawn(f)
    }

    // Throttled twice, then fine.
    assert_eq!(spawn_checked(call(7, ms(1), 2)).await.unwrap(), Ok(7));
    assert_eq!(RUNS.load(Ordering::Relaxed), 3);
    // Every attempt times out (real time, 20 ms each).
    assert_eq!(
        spawn_checked(call(8, secs(5), 0)).await.unwrap(),
        Err(E::TimedOut)
    );
    assert_eq!(RUNS.load(Ordering::Relaxed), 6);
    assert_eq!(milli(&BUDGET), 10_000 - 2_000 + 100 - 2_000);
    // Many at once, across the worker threads.
    let handles: Vec<_> = (0..32).map(|i| spawn_checked(call(i, ms(1), 0))).collect();
    for (i, h) in handles.into_iter().enumerate() {
        assert_eq!(h.await.unwrap(), Ok(i as u32));
    }
    assert_eq!(BREAKER.state(), CircuitState::Closed);
}

// ---------------------------------------------------------------------------
// Regression
// ---------------------------------------------------------------------------

/// Regression: breakers used to share one process-wide epoch (the first
/// `now` any breaker was given) and clamp earlier instants to it. A paused
/// tokio clock starts when its runtime is built and stays there; when
/// another breaker was first used (with the real clock) after that, every
/// instant of the paused clock before the epoch read as the same
/// millisecond, so a breaker that opened at virtual 0 ms was still open at
/// virtual `open_for`. Each breaker now has its own epoch.
///
/// Runs in a child process (this test binary, only this test), so that no
/// other test has used a breaker first.
#[test]
fn open_for_is_measured_on_a_paused_clock_started_before_another_breaker_is_used() {
    const CHILD: &str = "FLEET_ATTRIBUTE_EPOCH_CHILD";
    const NAME: &str =
        "open_for_is_measured_on_a_paused_clock_started_before_another_breaker_is_used";
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--nocapture"])
            .env(CHILD, "1")
            .output()
            .expect("run the child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }

    static OTHER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::ZERO);
    static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_millis(100));
    #[retry(attempts = 1, circuit = BREAKER)]
    async fn call() -> Result<u32, E> {
        step()
    }

    // The paused clock starts now and stays at this instant...
    let rt = paused_runtime();
    // ...while another part of the program uses a breaker 200 ms later.
    let _ = OTHER.acquire(Instant::now() + ms(200));

    rt.block_on(async {
        script([Err(Transient)]);
        assert_eq!(call().await, Err(Transient));
        assert_eq!(BREAKER.state(), CircuitState::Open);
        tokio::time::sleep(ms(100)).await;
        // open_for has passed: this is the trial, and it succeeds (with the
        // shared epoch it was refused, until the paused clock passed it).
        assert_eq!(call().await, Ok(2));
        assert_eq!(BREAKER.state(), CircuitState::Closed);
    });
}
