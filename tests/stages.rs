//! Stages that end, on tokio's paused clock (no jitter, so every gap is
//! exact): a `chain` stage that ends by time (`for = D`), the stop half of
//! `shorter` (Effect's `union`) and `longer` (Effect's `intersect`), in
//! the attribute and built with `Policy::from_strategy` in the runtime.

use std::cell::RefCell;
use std::time::Duration;

use backoff_runtime::strategy::{Chain, Constant, Exponential, Longer, Shorter, Stage};
use backoff_runtime::{GiveUp, GiveUpReason, Jitter, Policy, Strategy, retry};
use backoff_workspace_tests::AttemptLog as Log;

const SEC: u128 = 1000;
const S: fn(u64) -> Duration = Duration::from_secs;

/// The gaps of a runtime policy's call whose attempts each take `takes`,
/// on the paused clock.
async fn runtime_gaps<S: Strategy>(policy: Policy<S>, takes: Duration) -> Vec<u128> {
    let log = Log::default();
    let result = policy
        .jitter(Jitter::None)
        .retry_async(async || {
            tokio::time::sleep(takes).await;
            log.attempt()
        })
        .await;
    assert_eq!(result, Err("down"));
    log.gaps_ms()
}

#[tokio::test(start_paused = true)]
async fn a_stage_for_a_time_ends_at_the_first_failure_once_it_has_passed() {
    #[retry(
        chain(constant("1s", for = "3s"), constant("1m")),
        attempts = 6,
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    // Instant failures at 0, 1, 2 s wait 1 s; the one at 3 s is the first
    // once 3 s have passed.
    let expected = [SEC, SEC, SEC, 60 * SEC, 60 * SEC];
    assert_eq!(log.gaps_ms(), expected);

    let chain = Chain::lasting(Constant::new(S(1)), S(3), Constant::new(S(60)));
    let policy = Policy::from_strategy(chain).attempts(6);
    assert_eq!(runtime_gaps(policy, Duration::ZERO).await, expected);
}

#[tokio::test(start_paused = true)]
async fn the_time_counts_the_attempts_too() {
    // Each attempt takes 500 ms: failures at 0.5, 2 and 3.5 s, the last
    // past the stage's 3 s.
    #[retry(
        chain(constant("1s", for = "3s"), constant("1m")),
        attempts = 4,
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        tokio::time::sleep(Duration::from_millis(500)).await;
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    let expected = [1500, 1500, 60_500];
    assert_eq!(log.gaps_ms(), expected);

    let chain = Chain::lasting(Constant::new(S(1)), S(3), Constant::new(S(60)));
    let policy = Policy::from_strategy(chain).attempts(4);
    assert_eq!(
        runtime_gaps(policy, Duration::from_millis(500)).await,
        expected
    );
}

#[tokio::test(start_paused = true)]
async fn a_later_stage_counts_its_time_from_its_own_start() {
    // Effect's `exponential.upTo("30s").andThen(spaced("5m"))`, and a
    // stage ended by count before a timed one.
    #[retry(
        chain(
            constant("5s", times = 2),
            exponential(base = "1s", for = "6s"),
            constant("5m")
        ),
        attempts = 8,
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    // 5, 5; the exponential from 10 s: 1, 2, 4 (its time 0, 1, 3 s), then
    // at 7 s of its own the constant.
    let expected = [5, 5, 1, 2, 4, 300, 300].map(|s| s * SEC);
    assert_eq!(log.gaps_ms(), expected);

    let policy = Policy::from_strategy(Chain::new(
        Constant::new(S(5)),
        2,
        Chain::lasting(Exponential::new(S(1)), S(6), Constant::new(S(300))),
    ))
    .attempts(8);
    assert_eq!(runtime_gaps(policy, Duration::ZERO).await, expected);
}

/// What `on_giveup` was told.
#[derive(Default)]
struct Told(RefCell<Option<GiveUp>>);

#[tokio::test(start_paused = true)]
async fn shorter_continues_while_either_side_does() {
    #[retry(
        shorter(constant("1s", times = 3), constant("5s", for = "20s")),
        attempts = unlimited,
        jitter = "none",
        on_giveup = |_, report| *told.0.borrow_mut() = Some(*report)
    )]
    async fn call(log: &Log, told: &Told) -> Result<(), &'static str> {
        log.attempt()
    }

    let (log, told) = (Log::default(), Told::default());
    assert_eq!(call(&log, &told).await, Err("down"));
    // The shorter delay while both run (1 s at 0, 1, 2 s), then the other
    // side's until 20 s have passed (5 s at 3, 8, 13, 18 s): the failure
    // at 23 s ends the schedule.
    let expected = [1, 1, 1, 5, 5, 5, 5].map(|s| s * SEC);
    assert_eq!(log.gaps_ms(), expected);
    let report = told.0.borrow().expect("gave up");
    assert_eq!(
        (report.attempts, report.reason),
        (8, GiveUpReason::Attempts)
    );

    let policy = Policy::from_strategy(Shorter::new(
        Stage::times(Constant::new(S(1)), 3),
        Stage::lasting(Constant::new(S(5)), S(20)),
    ))
    .unlimited_attempts();
    assert_eq!(runtime_gaps(policy, Duration::ZERO).await, expected);
}

#[tokio::test(start_paused = true)]
async fn longer_ends_when_either_side_ends() {
    #[retry(
        longer(exponential(base = "1s", max = "1m"), constant("3s", for = "10s")),
        attempts = 10,
        jitter = "none",
        on_giveup = |_, report| *told.0.borrow_mut() = Some(*report)
    )]
    async fn call(log: &Log, told: &Told) -> Result<(), &'static str> {
        log.attempt()
    }

    let (log, told) = (Log::default(), Told::default());
    assert_eq!(call(&log, &told).await, Err("down"));
    // The longer delay: 3, 3, 4 s (failures at 0, 3, 6 s), and the failure
    // at 10 s ends the constant side, and with it the call, before its
    // `attempts`.
    let expected = [3, 3, 4].map(|s| s * SEC);
    assert_eq!(log.gaps_ms(), expected);
    let report = told.0.borrow().expect("gave up");
    assert_eq!(
        (report.attempts, report.reason),
        (4, GiveUpReason::Attempts)
    );

    let policy = Policy::from_strategy(Longer::new(
        Exponential::new(S(1)).max_delay(S(60)),
        Stage::lasting(Constant::new(S(3)), S(10)),
    ))
    .attempts(10);
    assert_eq!(runtime_gaps(policy, Duration::ZERO).await, expected);
}

#[tokio::test(start_paused = true)]
async fn spread_and_delay_for_read_a_timed_chain() {
    // `"spread"` keeps each sleep within the stage it is in, and below
    // the composed `max`.
    #[retry(
        chain(constant("1s", for = "3s"), constant("1m")),
        attempts = 6,
        jitter = "spread"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    let gaps = log.gaps();
    assert_eq!(gaps.len(), 5);
    assert!(gaps.iter().all(|d| *d <= S(60)), "{gaps:?}");
    assert!(gaps[0] <= S(1), "{gaps:?}");

    // A job queue's stateless delay replays the stages as instant failures.
    let chain = Chain::lasting(Constant::new(S(1)), S(3), Constant::new(S(60)));
    let policy = Policy::from_strategy(chain)
        .jitter(Jitter::None)
        .attempts(6);
    let delays: Vec<u64> = (1..6)
        .map(|k| policy.delay_for(k, 42).unwrap().as_secs())
        .collect();
    assert_eq!(delays, [1, 1, 1, 60, 60]);
}

#[tokio::test(start_paused = true)]
async fn a_union_caps_at_the_larger_side_once_one_can_end() {
    // With full jitter each sleep is drawn below the delay, the 5 s side's
    // included: the cap is not the 1 s side's.
    #[retry(shorter(constant("1s", times = 1), constant("5s")), attempts = 40)]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    let gaps = log.gaps();
    assert!(gaps.iter().all(|d| *d <= S(5)), "{gaps:?}");
    assert!(gaps[1..].iter().any(|d| *d > S(1)), "{gaps:?}");
    // (A `constant` stage's cap is its delay.)
    let capped = |d| Constant::new(d).max_delay(d);
    let union = Shorter::new(Stage::times(capped(S(1)), 1), capped(S(5)));
    assert_eq!(union.max_delay(), S(5));
}

#[tokio::test(start_paused = true)]
async fn four_boundaries_placed_by_time_fit_a_call() {
    #[retry(
        chain(
            constant("1s", times = 2),
            constant("2s", for = "4s"),
            constant("3s", times = 1),
            constant("4s", for = "8s"),
            constant("1m")
        ),
        attempts = 10,
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    // The 2 s stage from 2 s to the failure at 6 s, the 4 s one from 9 s
    // to the failure at 17 s.
    assert_eq!(
        log.gaps_ms(),
        [1, 1, 2, 2, 3, 4, 4, 60, 60].map(|s| s * SEC)
    );
}

#[tokio::test(start_paused = true)]
async fn stop_at_delay_reads_the_stage_a_call_is_in() {
    // The rule is checked when the call runs (the stage depends on the
    // time): the first 1 m delay reaches 30 s, so the call gives up there.
    #[retry(
        chain(constant("1s", for = "3s"), constant("1m")),
        stop_at_delay = "30s",
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    assert_eq!(log.gaps_ms(), [SEC, SEC, SEC]);
}

#[tokio::test(start_paused = true)]
async fn reset_after_starts_the_stages_over() {
    // The fifth attempt runs 10 s: a new run begins at its failure, with
    // the first stage and its time again.
    #[retry(
        chain(constant("1s", for = "3s"), constant("1m")),
        attempts = 5,
        reset_after = "10s",
        jitter = "none"
    )]
    async fn call(log: &Log) -> Result<(), &'static str> {
        if log.count() == 4 {
            tokio::time::sleep(S(10)).await;
        }
        log.attempt()
    }

    let log = Log::default();
    assert_eq!(call(&log).await, Err("down"));
    // Failures at 0, 1, 2, 3 s; 73 s (the new run's first), 74, 75, 76 and
    // 136 s (its fifth).
    assert_eq!(log.gaps_ms(), [1, 1, 1, 70, 1, 1, 1, 60].map(|s| s * SEC));
}
