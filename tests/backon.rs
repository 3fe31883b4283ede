//! docs/coming-from-backon.md, row by row: each backon builder next to the
//! attribute the page maps it to, both run on tokio's paused clock against
//! the same always-failing (or scripted) operation, their sleeps compared.

use std::sync::Mutex;
use std::time::Duration;

use backoff_runtime::retry;
use backoff_workspace_tests::AttemptLog as Log;
use backon::{ConstantBuilder, ExponentialBuilder, FibonacciBuilder, Retryable};

/// backon's sleeps for `builder`: the gaps between its attempts.
async fn backon_gaps(builder: impl backon::BackoffBuilder + 'static) -> Vec<Duration> {
    let log = Log::default();
    let result = (|| async { log.attempt() })
        .retry(builder)
        .sleep(tokio::time::sleep)
        .await;
    assert_eq!(result, Err("down"));
    log.gaps()
}

/// Runs an attributed `call(&Log)` and returns its gaps.
macro_rules! gaps_of {
    ($call:ident) => {{
        let log = Log::default();
        assert_eq!($call(&log).await, Err("down"));
        log.gaps()
    }};
}

const S: fn(u64) -> Duration = Duration::from_secs;

#[tokio::test(start_paused = true)]
async fn exponential_builder_default() {
    // min 1 s, factor 2, max 60 s, 3 retries, no jitter.
    #[retry(exponential(base = "1s", max = "1m"), attempts = 4, jitter = "none")]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let ours = gaps_of!(call);
    assert_eq!(ours, [S(1), S(2), S(4)]);
    assert_eq!(backon_gaps(ExponentialBuilder::default()).await, ours);
}

#[tokio::test(start_paused = true)]
async fn exponential_builder_with_everything_set() {
    // `with_max_times(6)` is six retries: `attempts = 7`.
    #[retry(
        exponential(base = "100ms", factor = 3, max = "2s"),
        attempts = 7,
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let backon = ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(100))
        .with_factor(3.0)
        .with_max_delay(S(2))
        .with_max_times(6);
    let ours = gaps_of!(call);
    assert_eq!(ours.len(), 6);
    // backon multiplies in `f32` seconds: its delays are equal to the
    // microsecond (300.000012 ms), which tokio's millisecond timer then
    // rounds up (301 ms on the clock).
    let theirs: Vec<Duration> = backon::BackoffBuilder::build(backon).collect();
    assert_eq!(theirs.len(), 6);
    for (a, b) in ours.iter().zip(&theirs) {
        assert!(
            a.abs_diff(*b) < Duration::from_micros(1),
            "{ours:?} vs {theirs:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn with_jitter_is_range_one_to_two_below_the_cap() {
    // backon's jitter adds up to the delay again: d to 2d. Ours is
    // `range(1, 2)`, capped at `max`; backon's is not (see the page).
    #[retry(exponential(base = "1s", max = "1m"), attempts = 5, jitter = range(1, 2))]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let central = [S(1), S(2), S(4), S(8)];
    let (mut ours_sum, mut theirs_sum) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..200 {
        let ours = gaps_of!(call);
        let theirs = backon_gaps(
            ExponentialBuilder::default()
                .with_jitter()
                .with_max_times(4),
        )
        .await;
        for (gaps, sum) in [(&ours, &mut ours_sum), (&theirs, &mut theirs_sum)] {
            assert_eq!(gaps.len(), 4);
            for (gap, c) in gaps.iter().zip(central) {
                assert!(*gap >= c && *gap <= c * 2, "{gap:?} for {c:?}");
                *sum += *gap;
            }
        }
    }
    // Both average 1.5 times the schedule (15 s · 1.5 · 200 calls).
    let expected = 1.5 * 15.0 * 200.0;
    for sum in [ours_sum, theirs_sum] {
        assert!(
            (sum.as_secs_f64() - expected).abs() < expected * 0.05,
            "{sum:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn with_jitter_goes_above_max_delay_where_ours_stops_at_max() {
    #[retry(exponential(base = "1s", max = "2s"), attempts = 5, jitter = range(1, 2))]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let ours = gaps_of!(call);
    assert!(ours.iter().all(|g| *g <= S(2)), "{ours:?}");
    let mut above = false;
    for _ in 0..50 {
        let builder = ExponentialBuilder::default()
            .with_max_delay(S(2))
            .with_jitter()
            .with_max_times(4);
        above |= backon_gaps(builder).await.iter().any(|g| *g > S(2));
    }
    assert!(above, "backon's jitter never went above its max_delay");
}

#[tokio::test(start_paused = true)]
async fn constant_builder() {
    // Our `constant` has full jitter unless told: write `"none"`.
    #[retry(constant("500ms"), attempts = 4, jitter = "none")]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let backon = ConstantBuilder::default()
        .with_delay(Duration::from_millis(500))
        .with_max_times(3);
    let ours = gaps_of!(call);
    assert_eq!(ours, [Duration::from_millis(500); 3]);
    assert_eq!(backon_gaps(backon).await, ours);
}

#[tokio::test(start_paused = true)]
async fn fibonacci_builder_default() {
    #[retry(fibonacci(base = "1s", max = "1m"), attempts = 6, jitter = "none")]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let ours = gaps_of!(call);
    assert_eq!(ours, [S(1), S(1), S(2), S(3), S(5)]);
    assert_eq!(
        backon_gaps(FibonacciBuilder::default().with_max_times(5)).await,
        ours
    );
}

#[tokio::test(start_paused = true)]
async fn with_total_delay_is_max_elapsed_for_instant_attempts() {
    // (backon's `with_total_delay` is on its exponential builder; factor 1
    // makes it constant.) backon sums its sleeps; `max_elapsed` measures from the call's start
    // (attempts included): equal when the attempts take no time.
    #[retry(constant("1s"), attempts = unlimited, max_elapsed = "3500ms", jitter = "none")]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    let backon = ExponentialBuilder::default()
        .with_factor(1.0)
        .without_max_times()
        .with_total_delay(Some(Duration::from_millis(3500)));
    let ours = gaps_of!(call);
    assert_eq!(ours, [S(1), S(1), S(1)]);
    assert_eq!(backon_gaps(backon).await, ours);
}

#[tokio::test(start_paused = true)]
async fn when_is_when() {
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
        let result = (|| async {
            let _ = theirs.attempt();
            Err::<(), _>(error)
        })
        .retry(
            ConstantBuilder::default()
                .with_delay(S(1))
                .with_max_times(3),
        )
        .sleep(tokio::time::sleep)
        .when(transient)
        .await;
        assert_eq!(result, Err(error));
        assert_eq!(ours.gaps(), theirs.gaps());
        assert_eq!(ours.gaps().len() + 1, attempts);
    }
}

#[tokio::test(start_paused = true)]
async fn notify_is_on_retry() {
    let heard = Mutex::new(Vec::new());
    #[retry(constant("1s"), attempts = 3, jitter = "none",
            on_retry = |_, event| heard.lock().unwrap().push(event.delay))]
    async fn call(log: &Log, heard: &Mutex<Vec<Duration>>) -> Result<(), &'static str> {
        log.attempt()
    }
    let log = Log::default();
    assert_eq!(call(&log, &heard).await, Err("down"));
    let theirs = Mutex::new(Vec::new());
    let backon_log = Log::default();
    let _ = (|| async { backon_log.attempt() })
        .retry(
            ConstantBuilder::default()
                .with_delay(S(1))
                .with_max_times(2),
        )
        .sleep(tokio::time::sleep)
        .notify(|_, d| theirs.lock().unwrap().push(d))
        .await;
    assert_eq!(*heard.lock().unwrap(), *theirs.lock().unwrap());
    assert_eq!(*heard.lock().unwrap(), [S(1), S(1)]);
}
