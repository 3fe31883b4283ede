//! Properties of the whole rewrite, under tokio's paused virtual time: for
//! random policies (strategy, jitter, attempt limit, deadline) and random
//! scripts of outcomes (ok / retryable / stop / retry-after), an
//! `async fn` under `#[retry]`:
//!
//! - never makes more calls than `attempts`;
//! - never sleeps longer than the strategy's `max`, except a `RetryAfter`,
//!   which it sleeps exactly;
//! - never starts a sleep that would end past `max_elapsed`;
//! - returns the success, or exactly the last error;
//! - calls `on_retry` exactly once per retry, with that attempt's error,
//!   number and delay, before sleeping.

use std::cell::RefCell;
use std::time::Duration;

use backoff_runtime::{Decision, Jitter, Policy, RetryEvent, retry};
use backoff_workspace_tests::block_on_paused;
use proptest::prelude::*;
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    Ok,
    Retryable,
    Stop,
    RetryAfter(u64),
}

#[derive(Debug, Clone, PartialEq)]
struct Failure {
    call: usize,
    kind: Outcome,
}

/// What one call of the function did.
#[derive(Default)]
struct Log {
    calls: usize,
    /// (virtual time when on_retry ran, the error's call, the event)
    retries: Vec<(Duration, usize, RetryEvent)>,
}

thread_local! {
    static LOG: RefCell<Log> = RefCell::new(Log::default());
}

fn classify(e: &Failure) -> Decision {
    match e.kind {
        Outcome::Stop => Decision::Stop,
        Outcome::RetryAfter(ms) => Decision::RetryAfter(Duration::from_millis(ms)),
        _ => Decision::Retry,
    }
}

#[retry(
    policy = policy,
    when = classify,
    on_retry = |e: &Failure, ev: &RetryEvent| {
        let now = start.elapsed();
        LOG.with(|l| l.borrow_mut().retries.push((now, e.call, *ev)));
    }
)]
async fn scripted(policy: &Policy, script: &[Outcome], start: Instant) -> Result<usize, Failure> {
    let call = LOG.with(|l| {
        let mut l = l.borrow_mut();
        l.calls += 1;
        l.calls
    });
    match script.get(call - 1).copied().unwrap_or(Outcome::Stop) {
        Outcome::Ok => Ok(call),
        kind => Err(Failure { call, kind }),
    }
}

fn policy() -> impl proptest::strategy::Strategy<Value = Policy> {
    let ms = Duration::from_millis;
    let base = (1u64..500).prop_map(ms);
    let strategy = prop_oneof![
        (base.clone(), 1.1f64..4.0, 100u64..5_000).prop_map(move |(b, f, m)| Policy::exponential(
            b
        )
        .factor(f)
        .max_delay(ms(m))),
        (base.clone(), 100u64..5_000).prop_map(move |(b, m)| Policy::linear(b).max_delay(ms(m))),
        base.clone().prop_map(Policy::constant),
        (base.clone(), 100u64..5_000).prop_map(move |(b, m)| Policy::fibonacci(b).max_delay(ms(m))),
        (base, 100u64..5_000).prop_map(move |(b, m)| Policy::decorrelated(b).max_delay(ms(m))),
        Just(Policy::immediate()),
    ];
    let jitter = prop_oneof![
        Just(None),
        Just(Some(Jitter::None)),
        Just(Some(Jitter::Full)),
        Just(Some(Jitter::Equal)),
        (0.01f64..=1.0).prop_map(|r| Some(Jitter::Scattered(r))),
    ];
    let attempts = prop_oneof![(1u32..12).prop_map(Some), Just(None)];
    let deadline = prop::option::of((0u64..20_000).prop_map(ms));
    (strategy, jitter, attempts, deadline, any::<u64>()).prop_map(|(p, j, a, d, seed)| {
        let mut p = p.seed(seed);
        if let Some(j) = j {
            p = p.jitter(j);
        }
        p = match a {
            Some(a) => p.attempts(a),
            None => p.unlimited_attempts(),
        };
        match d {
            Some(d) => p.max_elapsed(d),
            None => p,
        }
    })
}

fn script() -> impl proptest::strategy::Strategy<Value = Vec<Outcome>> {
    let outcome = prop_oneof![
        6 => Just(Outcome::Retryable),
        1 => Just(Outcome::Ok),
        1 => Just(Outcome::Stop),
        1 => (0u64..3_000).prop_map(Outcome::RetryAfter),
    ];
    prop::collection::vec(outcome, 0..15)
}

fn run(policy: &Policy, script: &[Outcome]) -> (Result<usize, Failure>, Log, Duration) {
    LOG.with(|l| *l.borrow_mut() = Log::default());
    let (result, elapsed) = block_on_paused(async {
        let start = Instant::now();
        let result = scripted(policy, script, start).await;
        (result, start.elapsed())
    });
    (result, LOG.with(|l| l.take()), elapsed)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_loop_keeps_every_promise(policy in policy(), script in script()) {
        let (result, log, elapsed) = run(&policy, &script);
        // Past the script, every call fails with a permanent error, so that
        // unlimited attempts end too.
        let outcome_of = |call: usize| script.get(call - 1).copied().unwrap_or(Outcome::Stop);

        // Never more calls than attempts.
        if let Some(limit) = policy.attempt_limit() {
            prop_assert!(log.calls <= limit as usize, "{} calls, limit {limit}", log.calls);
        }
        // The result is the success, or exactly the last call's error.
        match &result {
            Ok(call) => {
                prop_assert_eq!(*call, log.calls);
                prop_assert_eq!(outcome_of(*call), Outcome::Ok);
            }
            Err(e) => {
                prop_assert_eq!(e.call, log.calls, "not the last error");
                prop_assert_eq!(e.kind, outcome_of(e.call));
            }
        }
        // on_retry: once per retry, for each failed call but the last, in
        // order, with that call's number and error.
        prop_assert_eq!(log.retries.len(), log.calls - 1);
        let max = backoff_runtime::Strategy::max_delay(policy.strategy());
        let mut slept = Duration::ZERO;
        for (i, (at, call, ev)) in log.retries.iter().enumerate() {
            prop_assert_eq!(*call, i + 1);
            prop_assert_eq!(ev.attempt as usize, i + 1);
            prop_assert_ne!(outcome_of(*call), Outcome::Stop, "a Stop was retried");
            // Called before sleeping: the clock shows only earlier sleeps
            // (each rounded up to tokio's millisecond timer).
            let rounding = Duration::from_millis(i as u64);
            prop_assert!(*at >= slept && *at <= slept + rounding, "on_retry at {at:?}, slept {slept:?}");
            match outcome_of(*call) {
                Outcome::RetryAfter(ms) => prop_assert_eq!(ev.delay, Duration::from_millis(ms)),
                _ => prop_assert!(ev.delay <= max, "{:?} above max {:?}", ev.delay, max),
            }
            slept += ev.delay;
            // No sleep ends past the deadline.
            if let Some(limit) = policy.elapsed_limit() {
                prop_assert!(slept <= limit, "slept until {slept:?}, deadline {limit:?}");
            }
        }
        // All the time that passed was the granted sleeps (to tokio's
        // millisecond timer granularity).
        prop_assert!(elapsed >= slept && elapsed <= slept + Duration::from_millis(log.retries.len() as u64 + 1),
            "elapsed {elapsed:?}, slept {slept:?}");
    }
}
