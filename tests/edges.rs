//! The schedule language's documented edges (docs/guide.md, "Edges worth
//! knowing"), one test each: what a user porting a schedule from another
//! library would otherwise find out in production.

use std::time::Duration;

use backoff_runtime::strategy::{Chain, Constant, Decorrelated};
use backoff_runtime::{Jitter, Policy, retry};
use backoff_workspace_tests::AttemptLog as Log;
use tokio::time::Instant;

const S: fn(u64) -> Duration = Duration::from_secs;
const MS: fn(u64) -> Duration = Duration::from_millis;

/// `range` and `scattered` at the cap: uniform between the low bound and
/// `max`, not half the calls at exactly `max` (seed 000's `min(max, ..)`).
#[test]
fn range_and_scattered_at_the_cap_draw_uniformly_below_max() {
    for jitter in [Jitter::Range(0.8, 1.2), Jitter::Scattered(0.2)] {
        // Retry 5's delay is far past the 1 s cap.
        let policy = Policy::exponential(MS(100))
            .max_delay(S(1))
            .jitter(jitter)
            .attempts(10);
        let draws: Vec<Duration> = (0..10_000)
            .map(|key| policy.delay_for(5, key).unwrap())
            .collect();
        assert!(draws.iter().all(|d| *d >= MS(800) && *d <= S(1)));
        let at_max = draws.iter().filter(|d| **d == S(1)).count();
        assert!(at_max < 10, "{jitter:?}: {at_max} draws at exactly max");
        let mean = draws.iter().sum::<Duration>() / 10_000;
        assert!(
            mean > MS(890) && mean < MS(910),
            "{jitter:?}: mean {mean:?}"
        );
    }
}

/// `stop_at_delay` on a random schedule reads its central delay: the call
/// stops at the same retry every time, but a sleep may exceed the bound.
#[test]
fn stop_at_delay_on_a_random_schedule_bounds_the_central_delay() {
    // Decorrelated's central chain from 1 s: 2, 3.5, 5.75, 9.125, then
    // 14.19 s reaches 10 s: four retries, whatever it draws.
    let policy = Policy::from_strategy(Decorrelated::new(S(1)).max_delay(S(60)))
        .unlimited_attempts()
        .stop_at_delay(S(10));
    let mut longest = Duration::ZERO;
    for seed in 0..200 {
        let delays: Vec<Duration> = policy.seed(seed).delays().collect();
        assert_eq!(delays.len(), 4, "seed {seed}: {delays:?}");
        longest = longest.max(delays.iter().copied().max().unwrap());
    }
    assert!(longest > S(10), "no sleep above the bound: {longest:?}");
}

/// The Effect pattern's `maxRetries: 5` counts retries; `attempts` counts
/// calls: `attempts = 6`.
#[tokio::test(start_paused = true)]
async fn effects_max_retries_five_is_attempts_six() {
    #[retry(constant("1s"), jitter = "none", attempts = 6)]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    // The first call and five retries.
    assert_eq!(log.count(), 6);
}

/// Effect's `upTo("10s")` checks the elapsed time before each sleep, so a
/// sleep started at 8 s runs to 12 s; `max_elapsed` starts no sleep that
/// would end past the deadline.
#[tokio::test(start_paused = true)]
async fn max_elapsed_never_overruns_where_effects_up_to_does() {
    #[retry(constant("4s"), jitter = "none", attempts = unlimited, max_elapsed = "10s")]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    let began = Instant::now();
    assert_eq!(call(&log).await, Err("down"));
    // Attempts at 0, 4 and 8 s: Effect's would make a fourth at 12 s.
    assert_eq!(log.count(), 3);
    assert_eq!(began.elapsed(), S(8));
}

/// `"spread"` reads the schedule at a fractional retry, so around a
/// `chain`'s stage boundary it blends the two stages: the last 1 s retry
/// may wait up to 5.5 s and the first 10 s one as little as 5.5 s.
#[test]
fn spread_interpolates_across_a_chains_stage_boundary() {
    let policy = Policy::from_strategy(Chain::new(
        Constant::new(S(1)).max_delay(S(1)),
        2,
        Constant::new(S(10)).max_delay(S(10)),
    ))
    .jitter(Jitter::Spread)
    .attempts(5);
    let (mut last_short, mut first_long) = (Duration::ZERO, Duration::MAX);
    for key in 0..1000 {
        let second = policy.delay_for(2, key).unwrap();
        let third = policy.delay_for(3, key).unwrap();
        assert!(second >= S(1) && second <= MS(5500), "{second:?}");
        assert!(third >= MS(5500) && third <= S(10), "{third:?}");
        last_short = last_short.max(second);
        first_long = first_long.min(third);
    }
    assert!(last_short > S(5), "{last_short:?}");
    assert!(first_long < S(6), "{first_long:?}");
}
