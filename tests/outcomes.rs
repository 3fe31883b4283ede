//! The outcome arguments of `#[retry]`: `when_ok` (retrying an `Ok`),
//! `on_giveup` and its `GiveUp` report, `context`, the whole-call
//! `timeout`, `retry_after_max`, and `budget`/`circuit` given as expressions
//! (per-instance and shared breakers and budgets).
//!
//! Sleeps are recorded by an injected `sleep` or run on tokio's paused
//! clock; no test reads the wall clock.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::{
    AttemptContext, CircuitBreaker, CircuitOpen, Decision, Elapsed, GiveUp, GiveUpReason,
    RetryBudget, RetryEvent, retry,
};

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
    static SLEEPS: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
    static GIVE_UPS: RefCell<Vec<(String, GiveUp)>> = const { RefCell::new(Vec::new()) };
    static CONTEXTS: RefCell<Vec<AttemptContext>> = const { RefCell::new(Vec::new()) };
}

fn fresh() {
    CALLS.set(0);
    SLEEPS.take();
    GIVE_UPS.take();
    CONTEXTS.take();
}

fn call() -> u32 {
    let n = CALLS.get() + 1;
    assert!(n < 1000, "runaway retry loop");
    CALLS.set(n);
    n
}

fn record(d: Duration) {
    SLEEPS.with_borrow_mut(|s| s.push(d));
}

fn sleeps() -> Vec<Duration> {
    SLEEPS.with_borrow(Clone::clone)
}

fn give_ups() -> Vec<(String, GiveUp)> {
    GIVE_UPS.with_borrow(Clone::clone)
}

fn log_giveup<T: std::fmt::Debug, E: std::fmt::Debug>(outcome: &Result<T, E>, g: &GiveUp) {
    GIVE_UPS.with_borrow_mut(|v| v.push((format!("{outcome:?}"), *g)));
}

fn reasons() -> Vec<GiveUpReason> {
    give_ups().into_iter().map(|(_, g)| g.reason).collect()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

// ---------------------------------------------------------------------------
// when_ok
// ---------------------------------------------------------------------------

/// A response as `reqwest` gives it: `Ok` even for a 503.
#[derive(Debug, Clone, PartialEq)]
struct Response {
    status: u16,
    retry_after: Option<Duration>,
}

fn unavailable(r: &Response) -> Decision {
    match (r.status, r.retry_after) {
        (503, Some(d)) => Decision::RetryAfter(d),
        (503, None) => Decision::Retry,
        (429, _) => Decision::Throttled,
        _ => Decision::Stop,
    }
}

/// 503, 503 with Retry-After 7 s, then 200.
#[retry(constant("1s"), jitter = "none", attempts = 5, when_ok = unavailable, sleep = record)]
fn served() -> Result<Response, String> {
    Ok(match call() {
        1 => Response {
            status: 503,
            retry_after: None,
        },
        2 => Response {
            status: 503,
            retry_after: Some(Duration::from_secs(7)),
        },
        _ => Response {
            status: 200,
            retry_after: None,
        },
    })
}

#[test]
fn when_ok_retries_an_ok_and_waits_exactly_a_retry_after() {
    fresh();
    assert_eq!(served().unwrap().status, 200);
    assert_eq!(CALLS.get(), 3);
    assert_eq!(sleeps(), [Duration::from_secs(1), Duration::from_secs(7)]);
}

#[retry(constant("1s"), jitter = "none", attempts = 3, when_ok = |r: &Response| r.status == 503, on_giveup = log_giveup, sleep = record)]
fn always_unavailable() -> Result<Response, String> {
    Ok(Response {
        status: 503,
        retry_after: Some(ms(call().into())),
    })
}

#[test]
fn when_ok_gives_up_returning_the_last_ok_value_unchanged() {
    fresh();
    let last = always_unavailable().expect("the last Ok value, not an error");
    assert_eq!(
        last,
        Response {
            status: 503,
            retry_after: Some(ms(3))
        }
    );
    assert_eq!(CALLS.get(), 3);
    let report = give_ups();
    assert_eq!(report.len(), 1);
    assert!(report[0].0.starts_with("Ok("), "{report:?}");
    assert_eq!(report[0].1.reason, GiveUpReason::Attempts);
    assert_eq!(report[0].1.attempts, 3);
}

/// 429, 429, then 200: the throttled schedule (500 ms, 1 s) applies.
#[retry(constant("1s"), jitter = "none", attempts = 3, throttled(exponential(base = "500ms"), attempts = 6), when = |_e: &String| true, when_ok = unavailable, sleep = record)]
fn throttled_ok() -> Result<Response, String> {
    let status = if call() < 3 { 429 } else { 200 };
    Ok(Response {
        status,
        retry_after: None,
    })
}

#[test]
fn when_ok_throttled_uses_the_throttled_schedule() {
    fresh();
    assert_eq!(throttled_ok().unwrap().status, 200);
    assert_eq!(sleeps(), [ms(500), ms(1000)]);
}

/// Errors still go through `when`; `on_retry` sees the whole outcome.
#[retry(immediate, attempts = 5, when = |e: &u32| *e != 99, when_ok = |v: &u32| *v == 0, on_retry = |outcome: &Result<u32, u32>, ev: &RetryEvent| SEEN.with_borrow_mut(|s| s.push((*outcome, ev.attempt))))]
fn mixed() -> Result<u32, u32> {
    match call() {
        1 => Err(1),
        2 => Ok(0),
        3 => Err(99),
        _ => Ok(4),
    }
}

thread_local! {
    static SEEN: RefCell<Vec<(Result<u32, u32>, u32)>> = const { RefCell::new(Vec::new()) };
}

#[test]
fn when_ok_and_when_together_and_on_retry_sees_the_outcome() {
    fresh();
    SEEN.take();
    assert_eq!(mixed(), Err(99), "`when` stops the third attempt's error");
    assert_eq!(SEEN.with_borrow(Clone::clone), [(Err(1), 1), (Ok(0), 2)]);
}

#[tokio::test(start_paused = true)]
async fn when_ok_retry_after_waits_exactly_on_the_paused_clock() {
    #[retry(constant("1s"), jitter = "none", attempts = 3, when_ok = unavailable)]
    async fn fetch(n: &AtomicU32) -> Result<Response, String> {
        let status = if n.fetch_add(1, Ordering::SeqCst) == 0 {
            503
        } else {
            200
        };
        Ok(Response {
            status,
            retry_after: Some(Duration::from_secs(42)),
        })
    }
    let n = AtomicU32::new(0);
    let start = tokio::time::Instant::now();
    assert_eq!(fetch(&n).await.unwrap().status, 200);
    assert_eq!(start.elapsed(), Duration::from_secs(42));
}

// ---------------------------------------------------------------------------
// on_giveup: once, with the right reason, never on success
// ---------------------------------------------------------------------------

#[retry(immediate, attempts = 4, when = |e: &u32| *e < 2, on_giveup = log_giveup)]
fn stopped() -> Result<(), u32> {
    Err(call())
}

#[retry(immediate, attempts = 3, on_giveup = log_giveup)]
fn exhausted() -> Result<(), u32> {
    Err(call())
}

#[retry(immediate, attempts = 3, on_giveup = log_giveup)]
fn succeeds_second() -> Result<u32, u32> {
    let n = call();
    if n < 2 { Err(n) } else { Ok(n) }
}

#[test]
fn on_giveup_reports_stopped_and_attempts_once_and_never_on_success() {
    fresh();
    assert_eq!(stopped(), Err(2));
    assert_eq!(reasons(), [GiveUpReason::Stopped]);
    assert_eq!(give_ups()[0].1.attempts, 2);
    assert_eq!(give_ups()[0].0, "Err(2)");

    fresh();
    assert_eq!(exhausted(), Err(3));
    assert_eq!(reasons(), [GiveUpReason::Attempts]);
    assert_eq!(give_ups()[0].1.attempts, 3);

    fresh();
    assert_eq!(succeeds_second(), Ok(2));
    assert!(give_ups().is_empty(), "on_giveup ran on success");
}

#[retry(immediate, attempts = 5, max_elapsed = "10s", when = |_e: &u32| Decision::RetryAfter(Duration::from_secs(11)), on_giveup = log_giveup, sleep = record)]
fn retry_after_past_the_deadline() -> Result<(), u32> {
    Err(call())
}

#[test]
fn on_giveup_reports_a_deadline_including_a_retry_after_past_it() {
    // The injected sleep does not advance the clock: only the sleeps count,
    // each checked alone, so the deadline is crossed by a long wish only.
    fresh();
    assert_eq!(retry_after_past_the_deadline(), Err(1));
    assert_eq!(reasons(), [GiveUpReason::Deadline]);
    assert!(
        sleeps().is_empty(),
        "slept towards a wait it could not finish"
    );
    assert_eq!(give_ups()[0].1.attempts, 1);
}

#[tokio::test(start_paused = true)]
async fn on_giveup_reports_the_deadline_on_the_paused_clock() {
    #[retry(constant("400ms"), jitter = "none", attempts = unlimited, max_elapsed = "1s", on_giveup = log_giveup)]
    async fn slow() -> Result<(), u32> {
        Err(call())
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(slow().await, Err(3));
    assert_eq!(start.elapsed(), ms(800));
    let report = give_ups();
    assert_eq!(report.len(), 1);
    assert_eq!(report[0].1.reason, GiveUpReason::Deadline);
    assert_eq!(report[0].1.elapsed, ms(800));
    assert_eq!(report[0].1.attempts, 3);
}

static EMPTY_BUDGET: RetryBudget = RetryBudget::new(0, 0.0);

#[retry(immediate, attempts = 5, budget = EMPTY_BUDGET, on_giveup = log_giveup)]
fn over_budget() -> Result<(), u32> {
    Err(call())
}

#[test]
fn on_giveup_reports_an_empty_budget() {
    fresh();
    assert_eq!(over_budget(), Err(1));
    assert_eq!(reasons(), [GiveUpReason::Budget]);
}

#[derive(Debug, PartialEq)]
enum ServiceError {
    Down(u32),
    Open,
    TimedOut,
}

impl From<CircuitOpen> for ServiceError {
    fn from(_: CircuitOpen) -> Self {
        ServiceError::Open
    }
}

impl From<Elapsed> for ServiceError {
    fn from(_: Elapsed) -> Self {
        ServiceError::TimedOut
    }
}

static TRIPPED: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(3600));

#[retry(immediate, attempts = 3, circuit = TRIPPED, on_giveup = log_giveup)]
fn behind_a_tripped_breaker() -> Result<(), ServiceError> {
    Err(ServiceError::Down(call()))
}

#[test]
fn on_giveup_reports_an_open_breaker_that_refuses_the_first_attempt() {
    fresh();
    // The first call's failure opens the breaker (threshold 1): it gives up
    // with its real error rather than retry into an open breaker.
    assert_eq!(behind_a_tripped_breaker(), Err(ServiceError::Down(1)));
    assert_eq!(reasons(), [GiveUpReason::CircuitOpen]);
    assert_eq!(give_ups()[0].1.attempts, 1);
    // The next call is refused before its first attempt.
    fresh();
    assert_eq!(behind_a_tripped_breaker(), Err(ServiceError::Open));
    assert_eq!(CALLS.get(), 0, "the body ran behind an open breaker");
    let report = give_ups();
    assert_eq!(report.len(), 1);
    assert_eq!(report[0].1.reason, GiveUpReason::CircuitOpen);
    assert_eq!(report[0].1.attempts, 0);
    assert_eq!(report[0].0, "Err(Open)");
}

// ---------------------------------------------------------------------------
// timeout
// ---------------------------------------------------------------------------

#[retry(constant("1s"), jitter = "none", attempts = unlimited, timeout = "2500ms", on_giveup = log_giveup)]
async fn hangs_on_the_third_attempt(dropped: &AtomicU32) -> Result<(), ServiceError> {
    struct Guard<'a>(&'a AtomicU32);
    impl Drop for Guard<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let n = call();
    if n == 3 {
        let _guard = Guard(dropped);
        std::future::pending::<()>().await;
    }
    Err(ServiceError::Down(n))
}

#[tokio::test(start_paused = true)]
async fn timeout_cancels_the_attempt_in_flight_exactly_at_the_deadline() {
    fresh();
    let dropped = AtomicU32::new(0);
    let start = tokio::time::Instant::now();
    assert_eq!(
        hangs_on_the_third_attempt(&dropped).await,
        Err(ServiceError::TimedOut)
    );
    assert_eq!(start.elapsed(), ms(2500));
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the attempt was not cancelled"
    );
    let report = give_ups();
    assert_eq!(report.len(), 1);
    assert_eq!(report[0].1.reason, GiveUpReason::Timeout);
    assert_eq!(report[0].1.attempts, 3);
    assert_eq!(report[0].1.elapsed, ms(2500));
}

#[retry(constant("10s"), jitter = "none", attempts = unlimited, timeout = "3s")]
async fn sleeps_past_the_timeout() -> std::io::Result<()> {
    call();
    Err(std::io::Error::other("down"))
}

#[tokio::test(start_paused = true)]
async fn timeout_cuts_a_sleep_short_and_io_errors_convert() {
    fresh();
    let start = tokio::time::Instant::now();
    let e = sleeps_past_the_timeout().await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    assert_eq!(start.elapsed(), Duration::from_secs(3));
    assert_eq!(CALLS.get(), 1);
}

#[tokio::test(start_paused = true)]
async fn dropping_a_call_under_timeout_cancels_it_cleanly() {
    fresh();
    let dropped = AtomicU32::new(0);
    let fut = hangs_on_the_third_attempt(&dropped);
    // Two failures and a sleep of 1 s each: at 2.2 s the third attempt hangs.
    let cut = tokio::time::timeout(ms(2200), fut).await;
    assert!(cut.is_err());
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    assert!(give_ups().is_empty(), "on_giveup ran for a dropped call");
}

#[test]
fn futures_under_timeout_and_outcome_hooks_stay_send() {
    fn send<T: Send>(_: &T) {}
    let dropped = AtomicU32::new(0);
    send(&hangs_on_the_third_attempt(&dropped));
    send(&sleeps_past_the_timeout());
}

// ---------------------------------------------------------------------------
// context
// ---------------------------------------------------------------------------

#[retry(immediate, attempts = 3, context = ctx)]
fn with_context(id: u32) -> Result<u32, u32> {
    CONTEXTS.with_borrow_mut(|c| c.push(ctx));
    if ctx.last { Ok(id) } else { Err(ctx.attempt) }
}

#[retry(immediate, attempts = unlimited, context = attempt)]
fn unlimited_context() -> Result<u32, u32> {
    CONTEXTS.with_borrow_mut(|c| c.push(attempt));
    if attempt.attempt < 5 {
        Err(attempt.attempt)
    } else {
        Ok(attempt.attempt)
    }
}

#[test]
fn context_counts_attempts_and_knows_the_last() {
    fresh();
    assert_eq!(with_context(7), Ok(7));
    let seen = CONTEXTS.with_borrow(Clone::clone);
    assert_eq!(
        seen,
        [
            AttemptContext::new(1, false),
            AttemptContext::new(2, false),
            AttemptContext::new(3, true)
        ]
    );
    fresh();
    assert_eq!(unlimited_context(), Ok(5));
    assert!(CONTEXTS.with_borrow(|c| c.iter().all(|c| !c.last)));
}

// `context = mut ctx`, as rustc suggests for a body that changes its copy:
// each attempt still gets a fresh one.
#[retry(immediate, attempts = 3, context = mut ctx)]
fn mutable_context() -> Result<u32, u32> {
    ctx.attempt *= 10;
    if ctx.last {
        Ok(ctx.attempt)
    } else {
        Err(ctx.attempt)
    }
}

#[test]
fn context_may_be_bound_mut_and_each_attempt_gets_its_own() {
    assert_eq!(mutable_context(), Ok(30));
}

#[retry(constant("1s"), jitter = "none", attempts = 2, context = ctx)]
async fn async_context() -> Result<bool, bool> {
    tokio::task::yield_now().await;
    if ctx.last { Ok(true) } else { Err(false) }
}

#[tokio::test(start_paused = true)]
async fn context_in_an_async_fn_and_with_a_policy() {
    assert_eq!(async_context().await, Ok(true));

    static POLICY: backoff_runtime::Policy = backoff_runtime::Policy::immediate().attempts(4);
    #[retry(policy = &POLICY, context = ctx)]
    fn last_by_policy() -> Result<u32, u32> {
        if ctx.last { Ok(ctx.attempt) } else { Err(0) }
    }
    assert_eq!(last_by_policy(), Ok(4));
}

// ---------------------------------------------------------------------------
// retry_after_max
// ---------------------------------------------------------------------------

#[retry(immediate, attempts = 5, when = |e: &u64| Decision::RetryAfter(Duration::from_secs(*e)), on_giveup = log_giveup, sleep = record)]
fn server_says_wait(secs: u64) -> Result<(), u64> {
    call();
    Err(secs)
}

#[retry(immediate, attempts = 2, retry_after_max = "1h", when = |e: &u64| Decision::RetryAfter(Duration::from_secs(*e)), sleep = record)]
fn server_says_wait_up_to_an_hour(secs: u64) -> Result<(), u64> {
    call();
    Err(secs)
}

#[test]
fn a_retry_after_above_five_minutes_gives_up_at_once_by_default() {
    fresh();
    assert_eq!(server_says_wait(300), Err(300));
    assert_eq!(
        sleeps(),
        [Duration::from_secs(300); 4],
        "five minutes is allowed"
    );
    fresh();
    assert_eq!(server_says_wait(301), Err(301));
    assert!(sleeps().is_empty());
    assert_eq!(reasons(), [GiveUpReason::Deadline]);
    fresh();
    assert_eq!(server_says_wait(u64::MAX), Err(u64::MAX));
    assert!(sleeps().is_empty());
}

#[test]
fn retry_after_max_raises_the_bound() {
    fresh();
    assert_eq!(server_says_wait_up_to_an_hour(3600), Err(3600));
    assert_eq!(sleeps(), [Duration::from_secs(3600)]);
    fresh();
    assert_eq!(server_says_wait_up_to_an_hour(3601), Err(3601));
    assert!(sleeps().is_empty());
}

// ---------------------------------------------------------------------------
// budget and circuit as expressions: per instance, shared, keyed
// ---------------------------------------------------------------------------

struct Client {
    breaker: CircuitBreaker,
    budget: Arc<RetryBudget>,
    calls: AtomicU32,
}

impl Client {
    fn new(budget: Arc<RetryBudget>) -> Self {
        Client {
            breaker: CircuitBreaker::new(2, 1, Duration::from_secs(3600)),
            budget,
            calls: AtomicU32::new(0),
        }
    }

    #[retry(immediate, attempts = 1, circuit = self.breaker)]
    fn call(&self) -> Result<(), ServiceError> {
        Err(ServiceError::Down(
            self.calls.fetch_add(1, Ordering::SeqCst),
        ))
    }

    #[retry(immediate, attempts = 10, budget = &*self.budget)]
    fn spend(&self) -> Result<(), u32> {
        Err(self.calls.fetch_add(1, Ordering::SeqCst))
    }
}

#[test]
fn per_instance_breakers_are_independent() {
    let (a, b) = (
        Client::new(Arc::new(RetryBudget::new(1, 0.0))),
        Client::new(Arc::new(RetryBudget::new(1, 0.0))),
    );
    assert_eq!(a.call(), Err(ServiceError::Down(0)));
    assert_eq!(a.call(), Err(ServiceError::Down(1)));
    assert_eq!(a.call(), Err(ServiceError::Open), "a's breaker opened");
    assert_eq!(b.call(), Err(ServiceError::Down(0)), "b's is its own");
}

#[test]
fn a_budget_behind_an_arc_shared_by_clients_is_one_budget() {
    let shared = Arc::new(RetryBudget::new(3, 0.0));
    let (a, b) = (Client::new(shared.clone()), Client::new(shared));
    assert!(a.spend().is_err());
    assert_eq!(
        a.calls.load(Ordering::SeqCst),
        4,
        "three tokens, three retries"
    );
    assert!(b.spend().is_err());
    assert_eq!(b.calls.load(Ordering::SeqCst), 1, "no token left for b");
}

#[derive(Clone)]
struct SharedClient {
    breaker: Arc<CircuitBreaker>,
}

impl SharedClient {
    #[retry(immediate, attempts = 1, circuit = self.breaker)]
    async fn get(&self) -> Result<(), ServiceError> {
        Err(ServiceError::Down(call()))
    }
}

#[tokio::test]
async fn a_breaker_behind_an_arc_shared_by_clones_is_one_breaker() {
    fresh();
    let a = SharedClient {
        breaker: Arc::new(CircuitBreaker::new(2, 1, Duration::from_secs(3600))),
    };
    let b = a.clone();
    assert_eq!(a.get().await, Err(ServiceError::Down(1)));
    assert_eq!(b.get().await, Err(ServiceError::Down(2)));
    assert_eq!(a.get().await, Err(ServiceError::Open));
    assert_eq!(b.get().await, Err(ServiceError::Open));
    assert_eq!(CALLS.get(), 2);
}

struct Hosts {
    breakers: HashMap<&'static str, CircuitBreaker>,
}

impl Hosts {
    #[retry(immediate, attempts = 1, circuit = self.breakers[host])]
    fn fetch(&self, host: &str) -> std::io::Result<u32> {
        call();
        Err(std::io::Error::other(format!("{host} is down")))
    }
}

#[test]
fn keyed_breakers_and_io_errors() {
    fresh();
    let hosts = Hosts {
        breakers: ["a", "b"]
            .into_iter()
            .map(|h| (h, CircuitBreaker::new(1, 1, Duration::from_secs(3600))))
            .collect(),
    };
    assert_eq!(hosts.fetch("a").unwrap_err().to_string(), "a is down");
    let refused = hosts.fetch("a").unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    assert_eq!(hosts.fetch("b").unwrap_err().to_string(), "b is down");
    assert_eq!(CALLS.get(), 2);
}
