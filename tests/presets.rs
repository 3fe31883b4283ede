//! `preset = ".."` and `presets::*`: the attribute's preset waits what the
//! runtime's constant of that name waits (without jitter, exactly; with
//! its full jitter, never more), and a strategy, `attempts` or `jitter`
//! written beside it replaces that part.

use std::time::Duration;

use backoff_runtime::{Jitter, Policy, presets, retry};
use backoff_workspace_tests::AttemptLog as Log;

/// Runs each attributed `call(&Log)` and returns its gaps.
macro_rules! gaps_of {
    ($call:ident) => {{
        let log = Log::default();
        assert_eq!($call(&log).await, Err("down"));
        log.gaps()
    }};
}

/// The runtime preset's delays without jitter.
fn central(policy: Policy) -> Vec<Duration> {
    policy.jitter(Jitter::None).delays().collect()
}

#[tokio::test(start_paused = true)]
async fn each_preset_in_the_attribute_is_the_runtimes() {
    #[retry(preset = "internal_api", jitter = "none")]
    async fn internal_api(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    #[retry(preset = "external_api", jitter = "none")]
    async fn external_api(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    #[retry(preset = "rate_limited", jitter = "none")]
    async fn rate_limited(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    #[retry(preset = "database", jitter = "none")]
    async fn database(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    #[retry(preset = "third_party", jitter = "none")]
    async fn third_party(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    #[retry(preset = "aws_standard", jitter = "none")]
    async fn aws_standard(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }

    let ms = Duration::from_millis;
    let s = Duration::from_secs;
    assert_eq!(gaps_of!(internal_api), central(presets::INTERNAL_API));
    assert_eq!(gaps_of!(internal_api), [10, 20, 40, 80, 160].map(ms));
    assert_eq!(gaps_of!(external_api), central(presets::EXTERNAL_API));
    assert_eq!(gaps_of!(external_api), [100, 200, 400, 800, 1600].map(ms));
    assert_eq!(gaps_of!(rate_limited), central(presets::RATE_LIMITED));
    assert_eq!(
        gaps_of!(rate_limited),
        [
            500, 1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000
        ]
        .map(ms)
    );
    assert_eq!(gaps_of!(database), central(presets::DATABASE));
    assert_eq!(gaps_of!(database), [50, 100, 200].map(ms));
    assert_eq!(gaps_of!(third_party), central(presets::THIRD_PARTY));
    assert_eq!(gaps_of!(third_party), [1, 2, 4, 8, 16].map(s));
    assert_eq!(gaps_of!(aws_standard), central(presets::AWS_STANDARD));
    assert_eq!(gaps_of!(aws_standard), [1, 2].map(s));
}

#[tokio::test(start_paused = true)]
async fn a_presets_jitter_is_full() {
    #[retry(preset = "external_api")]
    async fn call(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    for policy in [
        presets::INTERNAL_API,
        presets::EXTERNAL_API,
        presets::RATE_LIMITED,
        presets::DATABASE,
        presets::THIRD_PARTY,
        presets::AWS_STANDARD,
    ] {
        assert_eq!(policy.jitter_kind(), Jitter::Full);
    }
    let central = central(presets::EXTERNAL_API);
    let mut below = false;
    for _ in 0..20 {
        let gaps = gaps_of!(call);
        assert_eq!(gaps.len(), central.len());
        assert!(gaps.iter().zip(&central).all(|(g, c)| g <= c), "{gaps:?}");
        below |= gaps.iter().zip(&central).any(|(g, c)| g < c);
    }
    assert!(below, "full jitter never drew below the delay");
}

#[tokio::test(start_paused = true)]
async fn what_is_written_beside_a_preset_replaces_that_part() {
    #[retry(preset = "database", attempts = 2, jitter = "none")]
    async fn fewer(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    #[retry(preset = "database", constant("1s"), jitter = "none")]
    async fn constant(log: &Log) -> Result<(), &'static str> {
        log.attempt()
    }
    assert_eq!(gaps_of!(fewer), [Duration::from_millis(50)]);
    // The preset's attempts (4) on the written strategy.
    assert_eq!(gaps_of!(constant), [Duration::from_secs(1); 3]);
}
