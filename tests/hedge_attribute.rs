//! `#[retry(hedge = ..)]` on `async fn`s: gRPC A6 hedging, on tokio's paused
//! clock with exact times.
//!
//! - attempt 1 starts at once, attempt k+1 `hedge` after attempt k, or at
//!   once when an attempt fails with an error `when` retries;
//! - the first accepted outcome is returned, the others dropped;
//! - `Stop` ends the call at once; all failed: the last error;
//! - `attempts` bounds every attempt started;
//! - `on_retry` keeps its type, `(&E, &RetryEvent)`, and sees each attempt
//!   that an error started; `on_hedge` each one the delay started;
//!   `on_giveup` and `fallback` the call that gave up;
//! - a budget pays for each hedge; an open breaker refuses the call;
//! - `hedge = "p95"` learns the function's latency, `"p99"` its p99 (the
//!   losers count, censored), readable in `on_hedge`'s event;
//! - `&self` methods, `clone(..)` arguments, `attempt_timeout`; the future
//!   is `Send`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_workspace_tests::LogNormal;

use backoff_runtime::{
    AttemptKind, CircuitBreaker, CircuitOpen, Decision, Elapsed, GiveUp, GiveUpReason, RetryBudget,
    RetryEvent, retry,
};
use tokio::time::{Instant, sleep};

#[derive(Debug, PartialEq, Clone)]
enum Error {
    Down(u32),
    BadRequest,
    Open,
    TimedOut,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

impl From<Elapsed> for Error {
    fn from(_: Elapsed) -> Self {
        Error::TimedOut
    }
}

/// A backend whose nth attempt (from 1) takes `latency[n - 1]` ms and then
/// gives `outcome[n - 1]`.
struct Backend {
    calls: AtomicU32,
    latency: Vec<u64>,
    outcome: Vec<Result<u32, Error>>,
    started: Mutex<Vec<u64>>,
    began: Instant,
}

impl Backend {
    fn new(latency: &[u64], outcome: &[Result<u32, Error>]) -> Self {
        Backend {
            calls: AtomicU32::new(0),
            latency: latency.to_vec(),
            outcome: outcome.to_vec(),
            started: Mutex::new(Vec::new()),
            began: Instant::now(),
        }
    }

    async fn attempt(&self) -> Result<u32, Error> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) as usize;
        self.started
            .lock()
            .unwrap()
            .push(self.began.elapsed().as_millis() as u64);
        sleep(Duration::from_millis(self.latency[n])).await;
        self.outcome[n].clone()
    }

    fn started(&self) -> Vec<u64> {
        self.started.lock().unwrap().clone()
    }

    #[retry(hedge = "20ms", attempts = 3)]
    async fn get(&self) -> Result<u32, Error> {
        self.attempt().await
    }

    #[retry(hedge = "20ms", attempts = 3, when = |e| match e {
        Error::BadRequest => Decision::Stop,
        _ => Decision::Retry,
    })]
    async fn get_when(&self) -> Result<u32, Error> {
        self.attempt().await
    }
}

#[tokio::test(start_paused = true)]
async fn a_slow_first_attempt_is_overtaken_by_the_hedge_20ms_later() {
    let backend = Backend::new(&[1000, 10, 10], &[Ok(1), Ok(2), Ok(3)]);
    let began = Instant::now();
    assert_eq!(backend.get().await, Ok(2));
    assert_eq!(began.elapsed(), Duration::from_millis(30));
    assert_eq!(backend.started(), [0, 20]);
}

#[tokio::test(start_paused = true)]
async fn a_fast_failure_starts_the_next_attempt_at_once() {
    let backend = Backend::new(&[5, 10, 10], &[Err(Error::Down(1)), Ok(2), Ok(3)]);
    let began = Instant::now();
    assert_eq!(backend.get().await, Ok(2));
    assert_eq!(backend.started(), [0, 5]);
    assert_eq!(began.elapsed(), Duration::from_millis(15));
}

#[tokio::test(start_paused = true)]
async fn stop_ends_the_call_at_once_and_every_failure_returns_the_last_error() {
    let backend = Backend::new(&[50, 10, 10], &[Ok(1), Err(Error::BadRequest), Ok(3)]);
    let began = Instant::now();
    assert_eq!(backend.get_when().await, Err(Error::BadRequest));
    assert_eq!(began.elapsed(), Duration::from_millis(30));
    assert_eq!(backend.started(), [0, 20]);

    let backend = Backend::new(
        &[50, 50, 50],
        &[
            Err(Error::Down(1)),
            Err(Error::Down(2)),
            Err(Error::Down(3)),
        ],
    );
    let began = Instant::now();
    assert_eq!(backend.get().await, Err(Error::Down(3)));
    // Attempts at 0, 20 and 40 ms; the last ends at 90 ms; no fourth.
    assert_eq!(backend.started(), [0, 20, 40]);
    assert_eq!(began.elapsed(), Duration::from_millis(90));
}

#[tokio::test(start_paused = true)]
async fn hooks_see_the_hedges_and_the_give_up_and_fallback_replaces_the_error() {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let seen = Mutex::new(Vec::new());
    let report = Mutex::new(None);

    #[retry(hedge = "20ms", attempts = 3,
            on_retry = |e, ev| seen.lock().unwrap().push((Some(e.clone()), ev.kind)),
            on_hedge = |ev| seen.lock().unwrap().push((None, ev.kind)),
            on_giveup = |_, g| *report.lock().unwrap() = Some(*g),
            fallback = |e, _| if e == Error::Down(3) { Ok(0) } else { Err(e) })]
    async fn call(
        seen: &Mutex<Vec<(Option<Error>, AttemptKind)>>,
        report: &Mutex<Option<GiveUp>>,
    ) -> Result<u32, Error> {
        let _ = (seen, report);
        let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        // Attempt 1 fails after 30 ms (after the hedge at 20 ms started).
        sleep(Duration::from_millis(if n == 1 { 30 } else { 50 })).await;
        Err(Error::Down(n))
    }

    assert_eq!(call(&seen, &report).await, Ok(0));
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (None, AttemptKind::Hedge),
            (Some(Error::Down(1)), AttemptKind::Retry),
        ]
    );
    let report = report.lock().unwrap().expect("gave up");
    assert_eq!(
        (report.attempts, report.reason),
        (3, GiveUpReason::Attempts)
    );
}

#[tokio::test(start_paused = true)]
async fn each_hedge_spends_the_budget_and_an_open_breaker_refuses() {
    static BUDGET: RetryBudget = RetryBudget::new(1, 0.0);
    static BREAKER: CircuitBreaker = CircuitBreaker::new(2, 1, Duration::from_secs(60));
    static CALLS: AtomicU32 = AtomicU32::new(0);

    #[retry(hedge = "20ms", attempts = 3, budget = BUDGET, circuit = BREAKER)]
    async fn call() -> Result<u32, Error> {
        CALLS.fetch_add(1, Ordering::SeqCst);
        sleep(Duration::from_millis(100)).await;
        Err(Error::Down(0))
    }

    // One token: one hedge. Both attempts fail: the breaker opens.
    assert_eq!(call().await, Err(Error::Down(0)));
    assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    assert_eq!(call().await, Err(Error::Open));
    assert_eq!(CALLS.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn p95_learns_the_functions_latency() {
    static CALLS: AtomicU32 = AtomicU32::new(0);

    #[retry(hedge = "p95", attempts = 2)]
    async fn call() -> Result<u32, Error> {
        let n = CALLS.fetch_add(1, Ordering::SeqCst);
        // Attempts take 10 ms, but every 50th is stuck for a second.
        sleep(Duration::from_millis(if n % 50 == 49 { 1000 } else { 10 })).await;
        Ok(n)
    }

    // Cold: hedges only after the default 100 ms.
    for _ in 0..100 {
        call().await.unwrap();
    }
    // Warm: the stuck attempt is overtaken a p95 (about 10-16 ms) later.
    let mut slowest = Duration::ZERO;
    for _ in 0..100 {
        let began = Instant::now();
        call().await.unwrap();
        slowest = slowest.max(began.elapsed());
    }
    assert!(
        slowest < Duration::from_millis(40),
        "slowest call took {slowest:?}"
    );
}

struct Client {
    name: String,
}

impl Client {
    #[retry(hedge = "20ms", attempts = 2, clone(tag), attempt_timeout = "50ms")]
    async fn fetch(&self, tag: String, slow_first: &AtomicU32) -> Result<String, Error> {
        let first = slow_first.swap(0, Ordering::SeqCst) == 1;
        sleep(Duration::from_millis(if first { 1000 } else { 10 })).await;
        Ok(format!("{}:{}", self.name, tag)) // moves the attempt's own clone
    }
}

#[tokio::test(start_paused = true)]
async fn methods_clones_and_attempt_timeouts() {
    let client = Client { name: "c".into() };
    let slow = AtomicU32::new(1);
    let began = Instant::now();
    assert_eq!(client.fetch("t".into(), &slow).await.unwrap(), "c:t");
    assert_eq!(began.elapsed(), Duration::from_millis(30));

    // Both attempts stuck: each is cut at 50 ms.
    #[retry(hedge = "20ms", attempts = 2, attempt_timeout = "50ms")]
    async fn stuck() -> Result<(), Error> {
        sleep(Duration::from_secs(10)).await;
        Ok(())
    }
    let began = Instant::now();
    assert_eq!(stuck().await, Err(Error::TimedOut));
    assert_eq!(began.elapsed(), Duration::from_millis(70));
}

#[test]
fn the_future_is_send() {
    #[retry(hedge = "p99", attempts = 3)]
    async fn call(url: &str) -> Result<usize, Error> {
        Ok(url.len())
    }
    fn is_send<T: Send>(_: T) {}
    is_send(call("x"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_time()
        .build()
        .unwrap();
    assert_eq!(
        rt.block_on(async { tokio::spawn(call("abc")).await.unwrap() }),
        Ok(3)
    );
}

#[tokio::test(start_paused = true)]
async fn context_tells_each_attempt_its_number_and_kind() {
    use backoff_runtime::AttemptContext;
    let seen = Mutex::new(Vec::new());

    #[retry(hedge = "20ms", attempts = 3, context = ctx)]
    async fn call(seen: &Mutex<Vec<AttemptContext>>) -> Result<u32, Error> {
        seen.lock().unwrap().push(ctx);
        match ctx.attempt {
            // Attempt 1 fails after 30 ms, after the hedge at 20 ms began;
            // the retry it starts at once (attempt 3) answers.
            1 => {
                sleep(Duration::from_millis(30)).await;
                Err(Error::Down(1))
            }
            2 => {
                sleep(Duration::from_secs(1)).await;
                Ok(2)
            }
            n => {
                sleep(Duration::from_millis(5)).await;
                Ok(n)
            }
        }
    }

    let began = Instant::now();
    assert_eq!(call(&seen).await, Ok(3));
    assert_eq!(began.elapsed(), Duration::from_millis(35));
    let seen: Vec<_> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|c| (c.attempt, c.kind, c.last))
        .collect();
    assert_eq!(
        seen,
        [
            (1, AttemptKind::Original, false),
            (2, AttemptKind::Hedge, false),
            (3, AttemptKind::Retry, true),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_bounds_the_hedged_call_and_reports_the_attempts_started() {
    let report = Mutex::new(None);

    #[retry(hedge = "20ms", attempts = 3, timeout = "50ms",
            on_giveup = |r, g| *report.lock().unwrap() = Some((r.clone(), *g)),
            fallback = |e, _| if e == Error::TimedOut { Ok(0) } else { Err(e) })]
    async fn stuck(report: &Mutex<Option<(Result<u32, Error>, GiveUp)>>) -> Result<u32, Error> {
        let _ = report;
        sleep(Duration::from_secs(10)).await;
        Ok(1)
    }

    let began = Instant::now();
    assert_eq!(stuck(&report).await, Ok(0));
    assert_eq!(began.elapsed(), Duration::from_millis(50));
    let (outcome, g) = report.lock().unwrap().clone().expect("gave up");
    assert_eq!(outcome, Err(Error::TimedOut));
    // Attempts at 0, 20 and 40 ms.
    assert_eq!((g.attempts, g.reason), (3, GiveUpReason::Timeout));
    assert_eq!(g.elapsed, Duration::from_millis(50));
}

/// Real shapes: a generic `impl AsRef<str>` argument, and an
/// `#[async_trait]` method (its body is already a boxed future when
/// `#[retry]` sees it).
#[tokio::test(start_paused = true)]
async fn generic_arguments_and_async_trait_methods() {
    #[retry(hedge = "20ms", attempts = 2)]
    async fn lookup<K: AsRef<str> + Sync>(key: K, slow: &AtomicU32) -> Result<usize, Error> {
        let first = slow.swap(0, Ordering::SeqCst) == 1;
        sleep(Duration::from_millis(if first { 1000 } else { 10 })).await;
        Ok(key.as_ref().len())
    }
    let slow = AtomicU32::new(1);
    let began = Instant::now();
    assert_eq!(lookup("four", &slow).await, Ok(4));
    assert_eq!(began.elapsed(), Duration::from_millis(30));

    #[async_trait::async_trait]
    trait Store {
        async fn get(&self, key: &str) -> Result<String, Error>;
    }
    struct Replica(AtomicU32);
    #[async_trait::async_trait]
    impl Store for Replica {
        #[retry(hedge = "20ms", attempts = 2)]
        async fn get(&self, key: &str) -> Result<String, Error> {
            let first = self.0.swap(0, Ordering::SeqCst) == 1;
            sleep(Duration::from_millis(if first { 1000 } else { 10 })).await;
            Ok(key.to_uppercase())
        }
    }
    let replica = Replica(AtomicU32::new(1));
    let began = Instant::now();
    assert_eq!(replica.get("k").await.as_deref(), Ok("K"));
    assert_eq!(began.elapsed(), Duration::from_millis(30));
}

#[tokio::test(start_paused = true)]
async fn p99_learns_the_functions_p99_not_the_winners() {
    // Lognormal, median 10 ms, σ 1.5: the function's p99 is 328 ms. Every
    // attempt teaches the estimate, a loser as "at least" what it ran, so
    // about 1 % of calls hedge; the delay each hedge waited is readable in
    // `on_hedge`'s event.
    let rng = Mutex::new(LogNormal::new(0x5EED, 1.5));
    let delays = Mutex::new(Vec::new());

    #[retry(hedge = "p99", attempts = 2,
            on_hedge = |ev| delays.lock().unwrap().push(ev.delay))]
    async fn call(rng: &Mutex<LogNormal>, delays: &Mutex<Vec<Duration>>) -> Result<(), Error> {
        let _ = delays;
        let takes = rng.lock().unwrap().draw();
        sleep(takes).await;
        Ok(())
    }

    const CALLS: u32 = 20_000;
    for _ in 0..CALLS {
        call(&rng, &delays).await.unwrap();
    }
    let delays = delays.into_inner().unwrap();
    let hedged = f64::from(u32::try_from(delays.len()).unwrap()) / f64::from(CALLS);
    assert!((0.005..=0.02).contains(&hedged), "hedged {hedged}");
    let last = *delays.last().unwrap();
    assert!(
        last > Duration::from_millis(240) && last < Duration::from_millis(460),
        "the learned p99: {last:?}"
    );
}

/// Regression: under `hedge`, `on_retry` written as everywhere else (a
/// closure typed `|e: &E, ev: &RetryEvent|`, or a path `fn(&E,
/// &RetryEvent)`) compiles and sees the error that started each retry; a
/// hedge the delay started goes to `on_hedge`, not to `on_retry`.
#[tokio::test(start_paused = true)]
async fn on_retry_keeps_its_type_under_hedge_and_on_hedge_hears_the_hedges() {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    static RETRIED: Mutex<Vec<Error>> = Mutex::new(Vec::new());
    fn log_retry(e: &Error, _: &RetryEvent) {
        RETRIED.lock().unwrap().push(e.clone());
    }
    let hedges = Mutex::new(Vec::new());

    #[retry(hedge = "20ms", attempts = 3,
            on_retry = log_retry,
            on_hedge = |ev: &RetryEvent| hedges.lock().unwrap().push((ev.attempt, ev.kind)))]
    async fn call(hedges: &Mutex<Vec<(u32, AttemptKind)>>) -> Result<u32, Error> {
        let _ = hedges;
        let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        // Attempt 1 fails at 30 ms, after the hedge at 20 ms started;
        // attempt 3 (started by that failure) answers.
        sleep(Duration::from_millis(if n == 1 { 30 } else { 50 })).await;
        if n == 1 { Err(Error::Down(1)) } else { Ok(n) }
    }

    #[retry(hedge = "20ms", attempts = 2,
            on_retry = |e: &Error, ev: &RetryEvent| { let _ = (e, ev.attempt); })]
    async fn typed_closure() -> Result<u32, Error> {
        Ok(1)
    }

    assert!(call(&hedges).await.is_ok());
    assert_eq!(*RETRIED.lock().unwrap(), [Error::Down(1)]);
    assert_eq!(hedges.into_inner().unwrap(), [(1, AttemptKind::Hedge)]);
    assert_eq!(typed_closure().await, Ok(1));
}

/// Beside `when_ok`, `on_retry` under `hedge` takes the whole outcome, as
/// everywhere else: a rejected `Ok` that started the next attempt reaches
/// it, and `on_hedge` hears only what the delay started.
#[tokio::test(start_paused = true)]
async fn beside_when_ok_on_retry_under_hedge_hears_the_rejected_ok() {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let retried = Mutex::new(Vec::new());
    let hedges = Mutex::new(0);

    #[retry(hedge = "20ms", attempts = 3,
            when_ok = |status: &u16| *status == 503,
            on_retry = |outcome, ev| retried.lock().unwrap().push((outcome.clone(), ev.kind)),
            on_hedge = |_| *hedges.lock().unwrap() += 1)]
    async fn call(
        retried: &Mutex<Vec<(Result<u16, Error>, AttemptKind)>>,
        hedges: &Mutex<u32>,
    ) -> Result<u16, Error> {
        let _ = (retried, hedges);
        // Attempt 1 answers 503 at 5 ms; attempt 2, started then, answers
        // 200 at 10 ms, before any delay ran out.
        CALLS.fetch_add(1, Ordering::SeqCst);
        sleep(Duration::from_millis(5)).await;
        Ok(if CALLS.load(Ordering::SeqCst) == 1 {
            503
        } else {
            200
        })
    }

    let began = Instant::now();
    assert_eq!(call(&retried, &hedges).await, Ok(200));
    assert_eq!(began.elapsed(), Duration::from_millis(10));
    assert_eq!(
        retried.into_inner().unwrap(),
        [(Ok(503), AttemptKind::Retry)]
    );
    assert_eq!(hedges.into_inner().unwrap(), 0);
}
