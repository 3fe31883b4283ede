//! Loom models of the lock-free parts: the count breaker, the rate breaker,
//! the retry budget, the adaptive throttle, and the breaker's fleet gate
//! (the trial grant a fleet such as `backoff-redis` hands out). Loom runs each model under
//! every interleaving of its threads (up to `LOOM_MAX_PREEMPTIONS`
//! preemptions) and checks the assertions in each.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=5 \
//!     cargo test -p backoff-runtime --release --lib loom
//! ```
//!
//! Only these tests use loom's atomics (`crate::sync`); time is a fixed
//! instant, so every run of a model sees the same clock.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::thread;

use crate::budget::RetryBudget;
use crate::circuit::{CircuitBreaker, CircuitState};
use crate::throttle::AdaptiveThrottle;

/// A clock that stands still.
fn t0() -> Instant {
    static T0: OnceLock<Instant> = OnceLock::new();
    *T0.get_or_init(Instant::now)
}

fn at(ms: u64) -> Instant {
    t0() + Duration::from_millis(ms)
}

/// No failure report is lost: two threads each report one failure to a
/// threshold-2 breaker, which ends open.
#[test]
fn loom_count_breaker_loses_no_failure() {
    loom::model(|| {
        let b = Arc::new(CircuitBreaker::new(2, 1, Duration::from_secs(1)));
        b.touch();
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let b = b.clone();
                thread::spawn(move || b.acquire_on(t0).unwrap().failure(t0()))
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(b.state(), CircuitState::Open);
        assert!(b.acquire(t0()).is_err());
    });
}

/// At most one trial at a time: two threads race for the trial of an open
/// breaker (open_for zero, a clock that stands still, so no claim lapses)
/// while the main thread reports a late failure of the closed generation;
/// one thread reports success, the other drops its permit (a failure). A
/// counter held while a trial permit lives never exceeds one, and no trial
/// slot is left taken.
#[test]
fn loom_count_breaker_admits_one_trial() {
    loom::model(|| {
        let b = Arc::new(CircuitBreaker::new(1, 2, Duration::ZERO));
        b.touch();
        let late = b.acquire_on(t0).unwrap();
        b.acquire_on(t0).unwrap().failure(t0());
        let in_trial = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..2)
            .map(|i| {
                let (b, in_trial) = (b.clone(), in_trial.clone());
                thread::spawn(move || {
                    if let Ok(permit) = b.acquire_on(t0) {
                        if permit.is_trial() {
                            assert_eq!(in_trial.fetch_add(1, SeqCst), 0, "two trials");
                            in_trial.fetch_sub(1, SeqCst);
                        }
                        match i {
                            0 => permit.success(),
                            _ => drop(permit),
                        }
                    }
                })
            })
            .collect();
        late.failure(t0());
        for t in threads {
            t.join().unwrap();
        }
        // Whatever happened, no trial is in flight: a caller gets through.
        assert!(b.acquire_on(t0).is_ok());
    });
}

/// Generations: a call admitted while closed reports its failure late,
/// racing with the trial that closes the breaker again; the late failure
/// never counts against the new generation (threshold 1: it would reopen).
/// Both threads run from the start (the late failure and the trial's
/// acquire and verdict interleave every way), and the model asserts that
/// loom explored more than one execution: a model whose threads never
/// overlap checks nothing (a mutant without the generation check passed
/// the earlier version, which ran once).
#[test]
fn loom_count_breaker_ignores_late_verdicts() {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static REOPENED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    loom::model(|| {
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // (Leaked, one per execution: the late permit borrows it from
        // another thread.)
        let b: &'static CircuitBreaker = Box::leak(Box::new(CircuitBreaker::new(
            1,
            1,
            Duration::from_millis(10),
        )));
        b.touch();
        let slow = b.acquire(t0()).unwrap();
        b.acquire_on(t0).unwrap().failure(t0());
        let late = thread::spawn(move || slow.failure(at(11)));
        let trial = thread::spawn(move || {
            let permit = b.acquire(at(10)).unwrap();
            assert!(permit.is_trial());
            permit.success();
        });
        late.join().unwrap();
        trial.join().unwrap();
        if b.state() != CircuitState::Closed {
            REOPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        assert_eq!(b.state(), CircuitState::Closed);
    });
    let runs = RUNS.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!("late verdicts: {runs} executions");
    assert!(
        runs > 1,
        "loom explored {runs} execution(s): the threads never raced"
    );
    assert_eq!(REOPENED.load(std::sync::atomic::Ordering::Relaxed), 0);
}

/// The rate breaker loses no failure: two threads each report a failure to
/// a breaker that opens at 2 failing calls of 2; whichever reports last sees
/// both in the window and opens it.
#[test]
fn loom_rate_breaker_opens_on_concurrent_failures() {
    loom::model(|| {
        let b = Arc::new(CircuitBreaker::rate(
            1.0,
            2,
            Duration::from_secs(10),
            Duration::from_secs(1),
        ));
        b.touch();
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let b = b.clone();
                thread::spawn(move || b.acquire_on(t0).unwrap().failure(t0()))
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(b.state(), CircuitState::Open);
    });
}

/// The rate breaker counts every call in its bucket: a success and two
/// failures race (min 3 calls, ratio 0.6): 2 of 3 failed, so it opens
/// (a lost count would leave it closed, a double count could not).
#[test]
fn loom_rate_breaker_counts_every_call() {
    loom::model(|| {
        let b = Arc::new(CircuitBreaker::rate(
            0.6,
            3,
            Duration::from_secs(10),
            Duration::from_secs(1),
        ));
        b.touch();
        let threads: Vec<_> = (0..3)
            .map(|i| {
                let b = b.clone();
                thread::spawn(move || {
                    let permit = b.acquire_on(t0).unwrap();
                    if i == 0 {
                        permit.success()
                    } else {
                        permit.failure(t0())
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(b.state(), CircuitState::Open);
    });
}

/// The budget never goes below zero or above its size: two threads spend
/// from a one-token bucket (exactly one succeeds) while a third deposits.
#[test]
fn loom_budget_spends_each_token_once() {
    loom::model(|| {
        let budget = Arc::new(RetryBudget::new(1, 0.5));
        budget.tokens();
        let spent = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..3)
            .map(|i| {
                let (budget, spent) = (budget.clone(), spent.clone());
                thread::spawn(move || {
                    if i == 2 {
                        budget.deposit();
                    } else if budget.try_spend() {
                        spent.fetch_add(1, SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let spent = spent.load(SeqCst);
        assert!(spent >= 1, "the full token was refused");
        let tokens = budget.tokens();
        assert!((0.0..=1.0).contains(&tokens), "{tokens}");
        // What is left is what was held and deposited, less what was spent.
        assert!(tokens <= 1.5 - spent as f64);
    });
}

/// A fleet's take-back at a sync (`budget::RemoteView::take`, everything above what the
/// process keeps) races two spends: every token is spent once or taken
/// once, never both, and none is lost (a take-back that read the balance
/// and subtracted it later gave back tokens spent meanwhile: issue 45).
#[test]
fn loom_budget_take_back_races_spends() {
    loom::model(|| {
        let budget = Arc::new(RetryBudget::new(3, 0.0));
        budget.tokens();
        let spent = Arc::new(AtomicUsize::new(0));
        let spenders: Vec<_> = (0..2)
            .map(|_| {
                let (budget, spent) = (budget.clone(), spent.clone());
                thread::spawn(move || {
                    if budget.try_spend() {
                        spent.fetch_add(1, SeqCst);
                    }
                })
            })
            .collect();
        let taken = crate::budget::RemoteView::of(&budget).take(1000);
        for t in spenders {
            t.join().unwrap();
        }
        let spent = spent.load(SeqCst) as u64;
        assert_eq!(
            spent * 1000 + taken + crate::budget::RemoteView::of(&budget).balance(),
            3000
        );
        assert!(
            crate::budget::RemoteView::of(&budget).balance() <= 1000,
            "kept more than asked"
        );
    });
}

/// The throttle loses no count: two threads each make a request the
/// backend rejects; the window then holds both requests and no accepts.
#[test]
fn loom_throttle_counts_every_request() {
    loom::model(|| {
        let throttle = Arc::new(AdaptiveThrottle::new(2.0, Duration::from_secs(120)));
        throttle.counts(t0());
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let throttle = throttle.clone();
                thread::spawn(move || {
                    // P(reject) is at most 1/2 here: a draw of 0.99 passes.
                    let permit = throttle.try_acquire_with(t0(), || 0.99).unwrap();
                    permit.rejected();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(throttle.counts(t0()), (2, 0));
    });
}

/// The fleet's trial gate (`circuit::RemoteView` and its hooks, as
/// a fleet drives them): a breaker held open by its fleet with one grant,
/// two threads calling at once. Exactly one call is the trial (the grant
/// is taken once), the other is refused and marks the fleet's trial as
/// wanted here, and no grant is left over.
#[test]
fn loom_fleet_grant_admits_one_trial() {
    loom::model(|| {
        let b = Arc::new(CircuitBreaker::new(1, 1, Duration::from_secs(3600)));
        b.touch();
        assert!(crate::circuit::RemoteView::attach(&b, Box::new(|| {})).is_some());
        crate::circuit::RemoteView::of(&b).hold(t0());
        crate::circuit::RemoteView::of(&b).grant();
        let trials = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (b, trials) = (b.clone(), trials.clone());
                thread::spawn(move || {
                    if let Ok(permit) = b.acquire_on(t0) {
                        assert!(permit.is_trial(), "held: only a trial passes");
                        trials.fetch_add(1, SeqCst);
                        permit.failure(t0());
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(trials.load(SeqCst), 1, "one grant, one trial");
        let want = crate::circuit::RemoteView::of(&b).take_want();
        assert!(want.wanted && !want.grant_unused, "{want:?}");
        assert!(crate::circuit::RemoteView::of(&b).held());
        assert!(b.acquire_on(t0).is_err(), "the trial failed: still held");
    });
}

/// The fleet's grant is never lost: the fleet's thread grants the trial
/// while a call races to acquire. Either the call is the trial (the grant
/// taken), or it is refused, marks the trial as wanted, and the grant is
/// still there for the next call; never refused with the grant gone.
#[test]
fn loom_fleet_grant_races_a_call() {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    loom::model(|| {
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let b = Arc::new(CircuitBreaker::new(1, 1, Duration::from_secs(3600)));
        b.touch();
        assert!(crate::circuit::RemoteView::attach(&b, Box::new(|| {})).is_some());
        crate::circuit::RemoteView::of(&b).hold(t0());
        let b2 = b.clone();
        let fleet = thread::spawn(move || crate::circuit::RemoteView::of(&b2).grant());
        let trial = match b.acquire_on(t0) {
            Ok(permit) => {
                assert!(permit.is_trial(), "held: only a trial passes");
                permit.success();
                true
            }
            Err(_) => false,
        };
        fleet.join().unwrap();
        let marks = crate::circuit::RemoteView::of(&b).take_want();
        if trial {
            assert!(!marks.grant_unused, "one grant, one trial: {marks:?}");
            assert_eq!(b.state(), CircuitState::Closed, "the trial succeeded");
        } else {
            assert!(marks.wanted && marks.grant_unused, "{marks:?}");
            assert!(
                b.acquire_on(t0).unwrap().is_trial(),
                "the grant is still there"
            );
        }
    });
    assert!(RUNS.load(std::sync::atomic::Ordering::Relaxed) > 1);
}

/// The fleet's snapshot of a count breaker (`run_ends`, then `report`,
/// then `run_ends` again, through `circuit::RemoteView`, as `backoff-redis` reads
/// them) while a call fails and the next succeeds: when the two reads of
/// the run ends agree, the report belongs with them (after the run-ending
/// success, the run is 0; before it, the run is the failures counted), and
/// the failure total only grows.
#[test]
fn loom_fleet_snapshot_of_a_run_and_its_end() {
    use crate::circuit::Report;
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    loom::model(|| {
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let b = Arc::new(CircuitBreaker::new(5, 1, Duration::from_secs(3600)));
        b.touch();
        assert!(crate::circuit::RemoteView::attach(&b, Box::new(|| {})).is_some());
        // (Creates the gate's loom atomics before the threads race.)
        assert_eq!(crate::circuit::RemoteView::of(&b).run_ends(), 0);
        assert_eq!(
            crate::circuit::RemoteView::of(&b).report(t0()),
            Report::Count {
                failures: 0,
                run: 0,
                threshold: 5,
            }
        );
        let b2 = b.clone();
        let calls = thread::spawn(move || {
            b2.acquire_on(t0).unwrap().failure(t0());
            b2.acquire_on(t0).unwrap().success();
        });
        let before = crate::circuit::RemoteView::of(&b).run_ends();
        let Report::Count { failures, run, .. } = crate::circuit::RemoteView::of(&b).report(t0())
        else {
            unreachable!("a count breaker")
        };
        let after = crate::circuit::RemoteView::of(&b).run_ends();
        if before == after {
            if after == 1 {
                assert_eq!((failures, run), (1, 0), "after the run's end");
            } else {
                // Before the end: the run is at most the failures counted
                // (a failure's count lands after its run, never before).
                assert!(run <= 1 && failures <= 1, "{failures} {run}");
            }
        }
        calls.join().unwrap();
        assert_eq!(crate::circuit::RemoteView::of(&b).run_ends(), 1);
        assert_eq!(
            crate::circuit::RemoteView::of(&b).report(t0()),
            Report::Count {
                failures: 1,
                run: 0,
                threshold: 5,
            }
        );
    });
    assert!(RUNS.load(std::sync::atomic::Ordering::Relaxed) > 1);
}
