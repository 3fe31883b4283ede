//! docs/coming-from-backon.md's tokio-retry and `backoff` rows: each
//! builder next to the attribute the page maps it to, both run on tokio's
//! paused clock against the same always-failing (or scripted) operation,
//! their sleeps compared (the backon rows are tests/backon.rs).

use std::sync::Mutex;
use std::time::Duration;

use backoff_runtime::{Decision, retry};
use backoff_workspace_tests::AttemptLog as Log;
use tokio_retry::strategy::{ExponentialBackoff, FibonacciBackoff, FixedInterval, jitter};
use tokio_retry::{Retry, RetryIf};

const MS: fn(u64) -> Duration = Duration::from_millis;
const S: fn(u64) -> Duration = Duration::from_secs;

/// Runs an attributed `call(&Log)` and returns its gaps.
macro_rules! gaps_of {
    ($call:ident) => {{
        let log = Log::default();
        assert_eq!($call(&log).await, Err("down"));
        log.gaps()
    }};
}

/// tokio-retry's sleeps for `strategy`: the gaps between its attempts.
async fn tokio_retry_gaps(strategy: impl IntoIterator<Item = Duration>) -> Vec<Duration> {
    let log = Log::default();
    let result = Retry::start(strategy, || async { log.attempt() }).await;
    assert_eq!(result, Err("down"));
    log.gaps()
}

#[tokio::test(start_paused = true)]
async fn tokio_retry_exponential_is_a_power_of_its_base() {
    // `from_millis(10)`: 10, 100, 1000 ms (b^k), and `.take(3)` is three
    // retries: `attempts = 4`.
    #[retry(exponential(base = "10ms", factor = 10), attempts = 4, jitter = "none")]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let ours = gaps_of!(call);
    assert_eq!(ours, [MS(10), MS(100), MS(1000)]);
    let theirs = ExponentialBackoff::from_millis(10).take(3);
    assert_eq!(tokio_retry_gaps(theirs).await, ours);
}

#[tokio::test(start_paused = true)]
async fn tokio_retry_factor_multiplies_every_delay() {
    // `from_millis(2).factor(500)`: 2^k · 500 ms, 1, 2, 4 s; `.max_delay`
    // is `max`.
    #[retry(exponential(base = "1s", max = "3s"), attempts = 5, jitter = "none")]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let ours = gaps_of!(call);
    assert_eq!(ours, [S(1), S(2), S(3), S(3)]);
    let theirs = ExponentialBackoff::from_millis(2)
        .factor(500)
        .max_delay(S(3))
        .take(4);
    assert_eq!(tokio_retry_gaps(theirs).await, ours);
}

#[tokio::test(start_paused = true)]
async fn tokio_retry_fixed_interval_and_fibonacci() {
    #[retry(constant("250ms"), attempts = 4, jitter = "none")]
    async fn fixed(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    #[retry(fibonacci(base = "100ms"), attempts = 6, jitter = "none")]
    async fn fibonacci(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let ours = gaps_of!(fixed);
    assert_eq!(ours, [MS(250); 3]);
    assert_eq!(
        tokio_retry_gaps(FixedInterval::from_millis(250).take(3)).await,
        ours
    );
    let ours = gaps_of!(fibonacci);
    assert_eq!(ours, [100, 100, 200, 300, 500].map(MS));
    assert_eq!(
        tokio_retry_gaps(FibonacciBackoff::from_millis(100).take(5)).await,
        ours
    );
}

#[tokio::test(start_paused = true)]
async fn tokio_retry_jitter_is_full_jitter() {
    // `.map(jitter)` draws each sleep uniformly between 0 and the delay:
    // `"full"` (the default of `constant`).
    #[retry(constant("1s"), attempts = 201)]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let ours = gaps_of!(call);
    let theirs = tokio_retry_gaps(FixedInterval::from_millis(1000).map(jitter).take(200)).await;
    for gaps in [&ours, &theirs] {
        assert_eq!(gaps.len(), 200);
        assert!(gaps.iter().all(|d| *d <= S(1)), "{gaps:?}");
        // Uniform over [0, 1 s): a quarter below 250 ms, a quarter above
        // 750 ms, give or take.
        let low = gaps.iter().filter(|d| **d < MS(250)).count();
        let high = gaps.iter().filter(|d| **d > MS(750)).count();
        assert!(
            (25..=75).contains(&low) && (25..=75).contains(&high),
            "{low} {high}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn tokio_retry_if_is_when() {
    fn transient(e: &&'static str) -> bool {
        *e == "down"
    }
    #[retry(constant("1s"), attempts = 4, jitter = "none", when = transient)]
    async fn call(log: &Log, fail_with: &'static str) -> Result<(), &'static str> {
        let _ = log.attempt();
        Err(fail_with)
    }
    for (error, attempts) in [("down", 4), ("bad request", 1)] {
        let ours = Log::default();
        assert_eq!(call(&ours, error).await, Err(error));
        let theirs = Log::default();
        let strategy = FixedInterval::new(S(1)).take(3);
        let action = || async {
            let _ = theirs.attempt();
            Err::<(), _>(error)
        };
        assert_eq!(
            RetryIf::start(strategy, action, transient).await,
            Err(error)
        );
        assert_eq!(ours.gaps(), theirs.gaps());
        assert_eq!(ours.gaps().len() + 1, attempts);
    }
}

/// The `backoff` crate's clock, read from tokio's (paused) one.
#[derive(Debug, Clone, Copy, Default)]
struct TokioClock;

impl backoff::Clock for TokioClock {
    fn now(&self) -> std::time::Instant {
        tokio::time::Instant::now().into_std()
    }
}

/// `backoff`'s exponential schedule on tokio's clock: `initial`, ×`m`, at
/// most `max`, randomized by `r`, until `max_elapsed`.
fn backoff_crate(
    initial: Duration,
    m: f64,
    max: Duration,
    r: f64,
    max_elapsed: Option<Duration>,
) -> backoff::exponential::ExponentialBackoff<TokioClock> {
    backoff::exponential::ExponentialBackoffBuilder::<TokioClock>::new()
        .with_initial_interval(initial)
        .with_multiplier(m)
        .with_max_interval(max)
        .with_randomization_factor(r)
        .with_max_elapsed_time(max_elapsed)
        .build()
}

/// `backoff`'s sleeps for `schedule`, each attempt taking `takes`.
async fn backoff_gaps(
    schedule: backoff::exponential::ExponentialBackoff<TokioClock>,
    takes: Duration,
) -> Vec<Duration> {
    let log = Log::default();
    let result = backoff::future::retry(schedule, || async {
        tokio::time::sleep(takes).await;
        log.attempt().map_err(backoff::Error::transient)
    })
    .await;
    assert_eq!(result, Err("down"));
    log.gaps()
}

#[tokio::test(start_paused = true)]
async fn backoff_exponential_without_randomization() {
    // 500 ms, ×1.5, at most 2 s, no randomization, no deadline.
    #[retry(
        exponential(base = "500ms", factor = 1.5, max = "2s"),
        attempts = 6,
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let ours = gaps_of!(call);
    assert_eq!(ours, [500, 750, 1125, 1688, 2000].map(MS));
    // (`backoff` multiplies in `f64` nanoseconds: 1687.5 ms where tokio's
    // millisecond timer wakes at 1688.)
    let theirs = backoff_crate(MS(500), 1.5, S(2), 0.0, None);
    let theirs = backoff_gaps_limited(theirs, 5).await;
    for (a, b) in ours.iter().zip(&theirs) {
        assert!(a.abs_diff(*b) <= MS(1), "{ours:?} vs {theirs:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn backoff_max_elapsed_time_is_max_elapsed() {
    // Both measure from the call's start, the attempts' own time included,
    // and start no sleep that would end past the deadline.
    #[retry(
        exponential(base = "1s", max = "1m"),
        attempts = unlimited,
        max_elapsed = "20s",
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        tokio::time::sleep(MS(500)).await;
        log.attempt()
    }
    let ours = gaps_of!(call);
    // Failures at 0.5, 2, 4.5, 9 s; a sleep of 8 s from 9 s would end at
    // 17 s, the next (16 s) past 20 s.
    assert_eq!(ours, [1500, 2500, 4500, 8500].map(MS));
    let theirs = backoff_crate(S(1), 2.0, S(60), 0.0, Some(S(20)));
    assert_eq!(backoff_gaps(theirs, MS(500)).await, ours);
}

#[tokio::test(start_paused = true)]
async fn backoff_randomization_is_scattered_but_ours_stays_under_max() {
    // `randomization_factor: 0.5` draws within ±50 % of the delay, as
    // `scattered(0.5)` does; at the cap `backoff` goes up to 1.5 × max,
    // ours stays at most `max`.
    #[retry(
        exponential(base = "1s", max = "4s"),
        attempts = 41,
        jitter = scattered(0.5)
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let ours = gaps_of!(call);
    let theirs = backoff_crate(S(1), 2.0, S(4), 0.5, None);
    let theirs = backoff_gaps_limited(theirs, 40).await;
    // The first retry: within 0.5 to 1.5 s for both.
    for gaps in [&ours, &theirs] {
        assert!(gaps[0] >= MS(500) && gaps[0] <= MS(1501), "{gaps:?}");
    }
    // At the cap (retries 3 on): ours 2 to 4 s, theirs 2 to 6 s, above 4 s
    // about half the time.
    assert!(
        ours[2..].iter().all(|d| *d >= S(2) && *d <= S(4)),
        "{ours:?}"
    );
    assert!(
        theirs[2..].iter().all(|d| *d >= S(2) && *d <= MS(6001)),
        "{theirs:?}"
    );
    assert!(
        theirs[2..].iter().filter(|d| **d > S(4)).count() >= 5,
        "{theirs:?}"
    );
}

/// [`backoff_gaps`] of an endless schedule, stopped after `retries`.
async fn backoff_gaps_limited(
    schedule: backoff::exponential::ExponentialBackoff<TokioClock>,
    retries: usize,
) -> Vec<Duration> {
    let log = Log::default();
    let _ = backoff::future::retry(schedule, || async {
        let result = log.attempt();
        if log.count() > retries {
            return result.map_err(backoff::Error::permanent);
        }
        result.map_err(backoff::Error::transient)
    })
    .await;
    log.gaps()
}

#[tokio::test(start_paused = true)]
async fn backoff_permanent_and_retry_after_are_decisions() {
    // `Error::permanent(e)` stops, `Error::retry_after(e, d)` waits d:
    // `Decision::Stop` and `Decision::RetryAfter(d)`.
    fn verdict(e: &u32) -> Decision {
        match e {
            1 => Decision::RetryAfter(S(7)),
            2 => Decision::Retry,
            _ => Decision::Stop,
        }
    }
    #[retry(constant("1s"), attempts = 10, jitter = "none", when = verdict)]
    async fn call(log: &Log) -> Result<(), u32> {
        let _ = log.attempt();
        Err(log.count() as u32)
    }
    let ours = Log::default();
    assert_eq!(call(&ours).await, Err(3));
    let theirs = Log::default();
    let schedule = backoff_crate(S(1), 1.0, S(1), 0.0, None);
    let result = backoff::future::retry(schedule, || async {
        let _ = theirs.attempt();
        Err(match theirs.count() as u32 {
            1 => backoff::Error::retry_after(1, S(7)),
            2 => backoff::Error::transient(2),
            n => backoff::Error::permanent(n),
        })
    })
    .await;
    assert_eq!(result, Err::<(), _>(3));
    assert_eq!(ours.gaps(), [S(7), S(1)]);
    assert_eq!(theirs.gaps(), ours.gaps());
}

#[tokio::test(start_paused = true)]
async fn backoff_notify_is_on_retry() {
    let heard = Mutex::new(Vec::new());
    #[retry(constant("1s"), attempts = 3, jitter = "none",
            on_retry = |_, event| heard.lock().unwrap().push(event.delay))]
    async fn call(log: &Log, heard: &Mutex<Vec<Duration>>) -> Result<(), &'static str> {
        log.attempt()
    }
    let log = Log::default();
    assert_eq!(call(&log, &heard).await, Err("down"));
    let theirs = Mutex::new(Vec::new());
    let their_log = Log::default();
    let schedule = backoff_crate(S(1), 1.0, S(1), 0.0, None);
    let _ = backoff::future::retry_notify(
        schedule,
        || async {
            let result = their_log.attempt();
            if their_log.count() >= 3 {
                return result.map_err(backoff::Error::permanent);
            }
            result.map_err(backoff::Error::transient)
        },
        |_, d| theirs.lock().unwrap().push(d),
    )
    .await;
    assert_eq!(*heard.lock().unwrap(), *theirs.lock().unwrap());
    assert_eq!(*heard.lock().unwrap(), [S(1), S(1)]);
}
