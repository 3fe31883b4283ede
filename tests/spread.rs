//! `jitter = "spread"` through every path of the attribute and of the
//! runtime's loops: each call keeps one phase for all its retries (its waits
//! never shrink, and retry k lands in the k-th window of the strategy's
//! schedule), and different calls get different phases.
//!
//! Sleeps are observed with `sleep = record` (a thread-local log) or on
//! tokio's paused clock; no test reads the wall clock.

use std::cell::RefCell;
use std::time::Duration;

use backoff_runtime::strategy::Linear;
use backoff_runtime::{Jitter, Policy, Strategy, retry};
use backoff_workspace_tests::block_on_paused;

thread_local! {
    static SLEEPS: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
}

fn record(d: Duration) {
    SLEEPS.with_borrow_mut(|s| s.push(d));
}

async fn record_async(d: Duration) {
    record(d);
}

fn take() -> Vec<Duration> {
    SLEEPS.take()
}

/// The attribute's schedule below: linear from 10 ms, capped at 1 s.
fn schedule() -> Linear {
    Linear::new(Duration::from_millis(10)).max_delay(Duration::from_secs(1))
}

/// Checks one call's waits: never shorter than the previous one, and
/// retry k at `S(k − ½ + p)` for some phase p, that is within
/// `[S(k − ½), S(k + ½)]` of the central schedule; returns the call's
/// first wait (which gives its phase).
fn check_call<S: Strategy>(s: &S, waits: &[Duration]) -> Duration {
    assert!(waits.windows(2).all(|w| w[0] <= w[1]), "{waits:?}");
    let c: Vec<f64> = (1..=waits.len() as u32 + 1)
        .map(|k| s.central_delay(k).as_secs_f64())
        .collect();
    let sum = |x: f64| {
        let whole = x.floor() as usize;
        c[..whole].iter().sum::<f64>() + (x - x.floor()) * c[whole]
    };
    let mut t = 0.0;
    for (i, w) in waits.iter().enumerate() {
        t += w.as_secs_f64();
        let k = i as f64 + 1.0;
        assert!(
            t >= sum(k - 0.5) - 1e-6 && t <= sum(k + 0.5) + 1e-6,
            "retry {k}: {t} s, {waits:?}"
        );
    }
    waits[0]
}

/// Many calls: each consistent, and their first waits spread over the
/// first window rather than stacked.
fn check_herd<S: Strategy>(s: &S, calls: &[Vec<Duration>]) {
    let mut firsts: Vec<Duration> = calls.iter().map(|w| check_call(s, w)).collect();
    firsts.sort();
    firsts.dedup();
    assert!(firsts.len() > calls.len() * 9 / 10, "{firsts:?}");
    let lo = firsts[0].as_secs_f64();
    let hi = firsts[firsts.len() - 1].as_secs_f64();
    let window = 1.5 * s.central_delay(1).as_secs_f64();
    assert!(hi - lo > 0.5 * window, "{lo} .. {hi}");
}

#[retry(linear(base = "10ms", max = "1s"), attempts = 6, jitter = "spread", sleep = record)]
fn plain(fail: &mut u32) -> Result<(), ()> {
    *fail += 1;
    if *fail < 6 { Err(()) } else { Ok(()) }
}

#[retry(linear(base = "10ms", max = "1s"), attempts = 6, jitter = "spread", sleep = record_async)]
async fn with_sleep(fail: &mut u32) -> Result<(), ()> {
    *fail += 1;
    if *fail < 6 { Err(()) } else { Ok(()) }
}

#[retry(linear(base = "10ms", max = "1s"), attempts = 6, jitter = "spread")]
async fn on_tokio(times: &mut Vec<tokio::time::Instant>) -> Result<(), ()> {
    times.push(tokio::time::Instant::now());
    if times.len() < 6 { Err(()) } else { Ok(()) }
}

const POLICY: Policy = Policy::linear(Duration::from_millis(10))
    .max_delay(Duration::from_secs(1))
    .jitter(Jitter::Spread)
    .attempts(6);

#[retry(policy = POLICY, sleep = record)]
fn from_policy(fail: &mut u32) -> Result<(), ()> {
    *fail += 1;
    if *fail < 6 { Err(()) } else { Ok(()) }
}

#[test]
fn a_plain_fn_keeps_its_phase() {
    let calls: Vec<Vec<Duration>> = (0..60)
        .map(|_| {
            take();
            plain(&mut 0).unwrap();
            take()
        })
        .collect();
    assert!(calls.iter().all(|w| w.len() == 5));
    check_herd(&schedule(), &calls);
}

#[test]
fn a_policy_keeps_its_phase() {
    let calls: Vec<Vec<Duration>> = (0..60)
        .map(|_| {
            take();
            from_policy(&mut 0).unwrap();
            take()
        })
        .collect();
    check_herd(&schedule(), &calls);
}

#[test]
fn an_async_fn_keeps_its_phase() {
    let calls: Vec<Vec<Duration>> = (0..60)
        .map(|_| {
            take();
            block_on_paused(with_sleep(&mut 0)).unwrap();
            take()
        })
        .collect();
    check_herd(&schedule(), &calls);
}

/// The compact state an `async fn` keeps between attempts, timed on
/// tokio's paused clock.
#[test]
fn an_async_fn_on_tokio_keeps_its_phase() {
    let calls: Vec<Vec<Duration>> = (0..60)
        .map(|_| {
            let mut times = Vec::new();
            block_on_paused(on_tokio(&mut times)).unwrap();
            times.windows(2).map(|w| w[1] - w[0]).collect()
        })
        .collect();
    assert!(calls.iter().all(|w| w.len() == 5));
    // tokio's timer wakes on whole milliseconds, up to 1 ms late.
    let s = schedule();
    let mut firsts: Vec<Duration> = calls
        .iter()
        .map(|w| {
            assert!(
                w.windows(2)
                    .all(|p| p[0] <= p[1] + Duration::from_millis(1)),
                "{w:?}"
            );
            w[0]
        })
        .collect();
    firsts.sort();
    firsts.dedup();
    assert!(firsts.len() > 5, "{firsts:?}");
    let total: Vec<f64> = calls
        .iter()
        .map(|w| w.iter().sum::<Duration>().as_secs_f64())
        .collect();
    // Retry 5 at S(4.5 + p), within [S(4.5), S(5.5)] = [0.125, 0.18] s,
    // give or take the clock's millisecond per sleep.
    let c = |k: u32| s.central_delay(k).as_secs_f64();
    let s45 = c(1) + c(2) + c(3) + c(4) + 0.5 * c(5);
    let s55 = s45 + 0.5 * c(5) + 0.5 * c(6);
    for t in total {
        assert!(t >= s45 - 1e-6 && t <= s55 + 0.006, "{t}");
    }
}

/// The runtime's loops and the schedule iterator.
#[test]
fn the_runtime_loops_keep_their_phase() {
    let policy = POLICY;
    let calls: Vec<Vec<Duration>> = (0..60).map(|_| policy.delays().collect()).collect();
    check_herd(&schedule(), &calls);
    let calls: Vec<Vec<Duration>> = (0..60)
        .map(|_| {
            let mut state = policy.start();
            std::iter::from_fn(|| state.next_delay()).collect()
        })
        .collect();
    check_herd(&schedule(), &calls);
}

/// Seeded, a policy repeats its phase; different seeds differ.
#[test]
fn a_seed_fixes_the_phase() {
    let a: Vec<Duration> = POLICY.seed(1).delays().collect();
    assert_eq!(a, POLICY.seed(1).delays().collect::<Vec<_>>());
    assert_ne!(a, POLICY.seed(2).delays().collect::<Vec<_>>());
}

/// `decorrelated` takes `"spread"`, and spreads around its mid-range chain.
#[retry(decorrelated(base = "10ms", max = "1s"), attempts = 5, jitter = "spread", sleep = record)]
fn decorrelated(fail: &mut u32) -> Result<(), ()> {
    *fail += 1;
    if *fail < 5 { Err(()) } else { Ok(()) }
}

#[test]
fn decorrelated_spreads_around_its_chain() {
    let s = backoff_runtime::strategy::Decorrelated::new(Duration::from_millis(10))
        .max_delay(Duration::from_secs(1));
    let calls: Vec<Vec<Duration>> = (0..60)
        .map(|_| {
            take();
            decorrelated(&mut 0).unwrap();
            take()
        })
        .collect();
    check_herd(&s, &calls);
}
