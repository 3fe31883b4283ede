//! The schedules the seeds describe, on tokio's paused clock (no jitter,
//! so every gap is exact): the composed forms `chain`, `steps`, `shorter`,
//! `longer` and `sum` in the attribute and built with
//! `Policy::from_strategy` in the runtime, and the essay's `3 + 2ⁿ`
//! minutes.

use std::time::Duration;

use backoff_runtime::jitter::{JitterRng, Jitterer};
use backoff_runtime::strategy::{
    Chain, Constant, Decorrelated, Exponential, Linear, Longer, Shorter, Steps, Sum,
};
use backoff_runtime::{Jitter, Policy, Strategy, retry};
use backoff_workspace_tests::AttemptLog as Log;
use tokio::time::Instant;

const SEC: u128 = 1000;
const MIN: u128 = 60 * SEC;

/// The gaps of a runtime policy's call, on the paused clock.
async fn runtime_gaps<S: Strategy>(policy: Policy<S>) -> Vec<u128> {
    let log = Log::default();
    let result = policy.retry_async(async || log.attempt()).await;
    assert_eq!(result, Err("down"));
    log.gaps_ms()
}

#[tokio::test(start_paused = true)]
async fn the_essays_three_plus_two_to_the_n_minutes() {
    #[retry(
        sum(constant("3m"), exponential(base = "1m", max = "1h")),
        attempts = 6,
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    // 3 + 2ⁿ with n from 0, as the essay counts.
    let minutes = [4, 5, 7, 11, 19].map(|m| m * MIN);
    assert_eq!(log.gaps_ms(), minutes);

    const M: Duration = Duration::from_secs(60);
    let policy = Policy::from_strategy(Sum::new(
        Constant::new(M.saturating_mul(3)).max_delay(M.saturating_mul(3)),
        Exponential::new(M).max_delay(M.saturating_mul(60)),
    ))
    .attempts(6);
    assert_eq!(runtime_gaps(policy).await, minutes);
}

#[tokio::test(start_paused = true)]
async fn a_chain_runs_each_stage_from_its_own_first_retry() {
    #[retry(
        chain(
            exponential(base = "100ms", times = 3),
            linear(base = "1s", max = "2500ms", times = 2),
            constant("1m")
        ),
        attempts = 9,
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    let expected = [100, 200, 400, 1000, 2000, MIN, MIN, MIN];
    assert_eq!(log.gaps_ms(), expected);

    let policy = Policy::from_strategy(Chain::new(
        Exponential::new(Duration::from_millis(100)),
        3,
        Chain::new(
            Linear::new(Duration::from_secs(1)).max_delay(Duration::from_millis(2500)),
            2,
            Constant::new(Duration::from_secs(60)),
        ),
    ))
    .attempts(9);
    assert_eq!(runtime_gaps(policy).await, expected);
}

#[tokio::test(start_paused = true)]
async fn steps_repeat_the_last() {
    // Read as written: no jitter unless one is given (ZIO's
    // `fromDurations`, tenacity's `wait_chain`).
    #[retry(steps("1s", "5s", "30s"), attempts = 6)]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    let expected = [SEC, 5 * SEC, 30 * SEC, 30 * SEC, 30 * SEC];
    assert_eq!(log.gaps_ms(), expected);

    static DELAYS: [Duration; 3] = [
        Duration::from_secs(1),
        Duration::from_secs(5),
        Duration::from_secs(30),
    ];
    let policy = Policy::from_strategy(Steps::new(&DELAYS)).attempts(6);
    assert_eq!(runtime_gaps(policy).await, expected);
}

#[tokio::test(start_paused = true)]
async fn shorter_and_longer_take_the_smaller_and_the_larger_delay() {
    #[retry(
        shorter(exponential(base = "1s", max = "1m"), linear(base = "3s", max = "1m")),
        attempts = 6,
        jitter = "none"
    )]
    async fn shorter(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    #[retry(
        longer(exponential(base = "1s", max = "1m"), linear(base = "3s", max = "1m")),
        attempts = 6,
        jitter = "none"
    )]
    async fn longer(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let exponential = Exponential::new(Duration::from_secs(1)).max_delay(Duration::from_secs(60));
    let linear = Linear::new(Duration::from_secs(3)).max_delay(Duration::from_secs(60));

    let log = Log::default();
    assert_eq!(shorter(&log).await, Err("down"));
    let expected = [1, 2, 4, 8, 15].map(|s| s * SEC);
    assert_eq!(log.gaps_ms(), expected);
    let policy = Policy::from_strategy(Shorter::new(exponential, linear)).attempts(6);
    assert_eq!(runtime_gaps(policy).await, expected);

    let log = Log::default();
    assert_eq!(longer(&log).await, Err("down"));
    let expected = [3, 6, 9, 12, 16].map(|s| s * SEC);
    assert_eq!(log.gaps_ms(), expected);
    let policy = Policy::from_strategy(Longer::new(exponential, linear)).attempts(6);
    assert_eq!(runtime_gaps(policy).await, expected);
}

#[tokio::test(start_paused = true)]
async fn forms_nest_and_each_stage_keeps_its_defaults() {
    // The exponential stage has no `max`: it stays capped at 10 s.
    #[retry(
        chain(sum(immediate, exponential(base = "2s"), times = 5), steps("1s", "2s")),
        attempts = 9,
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    assert_eq!(
        log.gaps_ms(),
        [
            2 * SEC,
            4 * SEC,
            8 * SEC,
            10 * SEC,
            10 * SEC,
            SEC,
            2 * SEC,
            2 * SEC
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn decorrelated_in_a_chain_starts_from_its_base() {
    #[retry(
        chain(constant("5s", times = 2), decorrelated(base = "100ms", max = "1m")),
        attempts = 12,
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    let gaps = log.gaps_ms();
    assert_eq!(gaps[..2], [5 * SEC, 5 * SEC]);
    // Its first retry draws from base to 3 · base, not 3 · 5 s.
    assert!((100..=300).contains(&gaps[2]), "{gaps:?}");
    for w in gaps[2..].windows(2) {
        assert!(w[1] >= 100 && w[1] <= 3 * w[0], "{gaps:?}");
    }

    let policy = Policy::from_strategy(Chain::new(
        Constant::new(Duration::from_secs(5)),
        2,
        Decorrelated::new(Duration::from_millis(100)).max_delay(Duration::from_secs(60)),
    ))
    .attempts(12);
    let gaps = runtime_gaps(policy).await;
    assert!((100..=300).contains(&gaps[2]), "{gaps:?}");
}

#[tokio::test(start_paused = true)]
async fn jitter_applies_once_to_the_composed_delay_and_stays_under_its_max() {
    // A `constant` stage's max is its delay: the composed max is 20 s, and
    // `range(0.5, 1.5)` is capped there.
    #[retry(chain(constant("10s", times = 3), constant("20s")), attempts = 40, jitter = range(0.5, 1.5))]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    let gaps = log.gaps_ms();
    assert!(
        gaps[..3].iter().all(|g| (5 * SEC..=15 * SEC).contains(g)),
        "{gaps:?}"
    );
    assert!(
        gaps[3..].iter().all(|g| (10 * SEC..=20 * SEC).contains(g)),
        "{gaps:?}"
    );
    assert!(gaps[3..].iter().any(|g| *g < 19 * SEC), "{gaps:?}");

    let policy = Policy::from_strategy(Sum::new(
        Constant::new(Duration::from_secs(1)),
        Constant::new(Duration::from_secs(1)),
    ))
    .jitter(Jitter::Range(1.0, 1.0))
    .attempts(3);
    assert_eq!(runtime_gaps(policy).await, [2 * SEC, 2 * SEC]);
}

#[tokio::test(start_paused = true)]
async fn the_clojure_macros_stop() {
    #[retry(
        exponential(base = "1s", max = "1m"),
        stop_at_delay = "10s",
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), usize> {
        let _ = log.attempt();
        Err(log.count())
    }

    let log = Log::default();
    // The fifth attempt's error: the sixth would follow a 16 s wait.
    assert_eq!(call(&log).await, Err(5));
    assert_eq!(log.gaps_ms(), [SEC, 2 * SEC, 4 * SEC, 8 * SEC]);

    let policy = Policy::exponential(Duration::from_secs(1))
        .max_delay(Duration::from_secs(60))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .stop_at_delay(Duration::from_secs(10));
    assert_eq!(runtime_gaps(policy).await, [SEC, 2 * SEC, 4 * SEC, 8 * SEC]);
}

#[tokio::test(start_paused = true)]
async fn stop_at_delay_reads_a_composed_schedule_and_a_random_one() {
    // 1 s, 5 s, then 30 s reaches the stop: two retries.
    #[retry(steps("1s", "5s", "30s"), stop_at_delay = "30s", jitter = "none")]
    async fn steps(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    // Random by itself: checked at run time against its central delay,
    // attempts unlimited.
    #[retry(decorrelated(base = "100ms", max = "1m"), stop_at_delay = "2s")]
    async fn decorrelated(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(steps(&log).await, Err("down"));
    assert_eq!(log.gaps_ms(), [SEC, 5 * SEC]);

    // Its central delays (the mid-range chain) from 100 ms: 200, 350, 575,
    // 912.5, 1418.75, then 2178.125 ms: five retries, whatever it draws.
    for _ in 0..5 {
        let log = Log::default();
        assert_eq!(decorrelated(&log).await, Err("down"));
        assert_eq!(log.gaps_ms().len(), 5);
    }
}

#[tokio::test(start_paused = true)]
async fn the_effect_patterns_deadline() {
    // The guide's example, as written there (and `context`). Attempts at
    // 0, 4 and 8 s; the next sleep would end at 12 s, past the deadline:
    // it is cut to end at 10 s, where one last try runs.
    #[retry(
        constant("4s"),
        jitter = "none",
        attempts = unlimited,
        max_elapsed = "10s",
        on_deadline = "last_try",
        context = ctx
    )]
    async fn call(log: &Log, succeed_last: bool) -> Result<&'static str, String> {
        let _ = log.attempt();
        match (ctx.last, succeed_last) {
            (true, true) => Ok("at the deadline"),
            (last, _) => Err(format!("attempt {}, last {last}", ctx.attempt)),
        }
    }

    let log = Log::default();
    let began = Instant::now();
    assert_eq!(call(&log, true).await, Ok("at the deadline"));
    assert_eq!(log.gaps_ms(), [4 * SEC, 4 * SEC, 2 * SEC]);
    assert_eq!(began.elapsed(), Duration::from_secs(10));

    // The last try's error is the call's.
    let log = Log::default();
    assert_eq!(
        call(&log, false).await,
        Err("attempt 4, last true".to_owned())
    );
    assert_eq!(log.gaps_ms(), [4 * SEC, 4 * SEC, 2 * SEC]);

    let policy = Policy::constant(Duration::from_secs(4))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(Duration::from_secs(10))
        .on_deadline(backoff_runtime::OnDeadline::LastTry);
    assert_eq!(runtime_gaps(policy).await, [4 * SEC, 4 * SEC, 2 * SEC]);
    // Without it, the call gives up at 8 s.
    let policy = policy.on_deadline(backoff_runtime::OnDeadline::GiveUpEarly);
    assert_eq!(runtime_gaps(policy).await, [4 * SEC, 4 * SEC]);
}

#[tokio::test(start_paused = true)]
async fn spread_reads_a_composed_schedule() {
    #[retry(
        chain(constant("1s", times = 2), exponential(base = "2s", max = "20s")),
        jitter = "spread",
        attempts = 8
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    for _ in 0..10 {
        let log = Log::default();
        assert_eq!(call(&log).await, Err("down"));
        let gaps = log.gaps_ms();
        assert_eq!(gaps.len(), 7);
        // A schedule that never shrinks: neither do the spread waits, and
        // none exceeds the composed max (20 s).
        assert!(gaps.windows(2).all(|w| w[0] <= w[1]), "{gaps:?}");
        assert!(gaps.iter().all(|g| *g <= 20 * SEC), "{gaps:?}");
        assert!(gaps[6] >= 8 * SEC, "{gaps:?}");
    }
}

/// A jitterer of one's own: a second more than each delay.
#[derive(Debug)]
struct PlusASecond;

impl Jitterer for PlusASecond {
    fn jitter(&self, delay: Duration, _: &mut JitterRng) -> Duration {
        delay + Duration::from_secs(1)
    }
}

static PLUS_A_SECOND: PlusASecond = PlusASecond;

/// One that draws from the call's random source: uniform in `[d, 2d]`.
#[derive(Debug)]
struct UpToDouble;

impl Jitterer for UpToDouble {
    fn jitter(&self, delay: Duration, rng: &mut JitterRng) -> Duration {
        rng.uniform(delay, delay.saturating_mul(2))
    }
}

static UP_TO_DOUBLE: UpToDouble = UpToDouble;

#[tokio::test(start_paused = true)]
async fn a_jitterer_of_ones_own_is_capped_at_max() {
    // 1, 2, 3 (the cap), 3 s, each a second more, but never above 3 s.
    #[retry(exponential(base = "1s", max = "3s"), attempts = 5, jitter = PLUS_A_SECOND)]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    let expected = [2 * SEC, 3 * SEC, 3 * SEC, 3 * SEC];
    assert_eq!(log.gaps_ms(), expected);

    let policy = Policy::exponential(Duration::from_secs(1))
        .max_delay(Duration::from_secs(3))
        .jitter_with(&PLUS_A_SECOND)
        .attempts(5);
    assert_eq!(runtime_gaps(policy).await, expected);
}

#[test]
fn a_jitterer_draws_from_the_key_under_delay_for() {
    let policy = Policy::exponential(Duration::from_millis(100))
        .max_delay(Duration::from_secs(60))
        .jitter_with(&UP_TO_DOUBLE)
        .attempts(10);
    let mut distinct = std::collections::BTreeSet::new();
    for key in 0..50u64 {
        for k in 1..=9u32 {
            let d = policy.delay_for(k, key).unwrap();
            // The same key, the same delay: a job queue can recompute it.
            assert_eq!(Some(d), policy.delay_for(k, key));
            let central = Duration::from_millis(100 << (k - 1));
            assert!(d >= central && d <= central * 2, "{d:?} for retry {k}");
            if k == 1 {
                distinct.insert(d);
            }
        }
    }
    // Each key its own draw.
    assert!(distinct.len() > 40, "{distinct:?}");
}
