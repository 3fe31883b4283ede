//! The breaker's unit tests.

use super::*;

fn at(base: Instant, ms: u64) -> Instant {
    base + Duration::from_millis(ms)
}

#[test]
fn packing_round_trips() {
    let zero = Packed::load(0);
    for p in [
        zero,
        Packed {
            count: COUNT_MAX,
            ..zero
        },
        zero.entered(OPEN, 0, TIME_MASK),
        Packed {
            state: HALF_OPEN,
            generation: 255,
            count: 5,
            trial: true,
            at: 12345,
        },
    ] {
        assert_eq!(Packed::load(p.store()), p);
    }
    assert_eq!(zero.store(), 0);
    assert_eq!(zero.entered(OPEN, 0, 0).entered(CLOSED, 0, 0).store() & CLEAN_MASK, 0);
    assert_ne!(zero.entered(OPEN, 0, 0).entered(CLOSED, RATE_MARK, 0).store() & CLEAN_MASK, 0);
    let rate = CircuitBreaker::rate(0.5, 1, Duration::ZERO, Duration::ZERO);
    assert_ne!(rate.word.load(Ordering::Relaxed) & CLEAN_MASK, 0);
}

#[test]
fn every_transition() {
    let b = CircuitBreaker::new(3, 2, Duration::from_millis(100));
    let t = Instant::now();
    // Closed: failures count, a success resets them.
    b.acquire(t).unwrap().failure(t);
    b.acquire(t).unwrap().failure(t);
    b.acquire(t).unwrap().success();
    b.acquire(t).unwrap().failure(t);
    b.acquire(t).unwrap().failure(t);
    assert_eq!(b.state(), CircuitState::Closed);
    // Closed -> Open on the third consecutive failure.
    b.acquire(t).unwrap().failure(t);
    assert_eq!(b.state(), CircuitState::Open);
    // Open: fail fast until open_for has passed.
    assert_eq!(
        b.acquire(at(t, 99)).unwrap_err(),
        CircuitOpen::after(Duration::from_millis(1))
    );
    // Open -> HalfOpen: one trial at a time.
    let trial = b.acquire(at(t, 100)).unwrap();
    assert!(trial.is_trial());
    assert_eq!(b.state(), CircuitState::HalfOpen);
    assert!(b.acquire(at(t, 100)).is_err());
    // HalfOpen -> Open on a failed trial, timed from then.
    trial.failure(at(t, 150));
    assert_eq!(b.state(), CircuitState::Open);
    assert!(b.acquire(at(t, 249)).is_err());
    // HalfOpen -> HalfOpen on a success below the threshold.
    b.acquire(at(t, 250)).unwrap().success();
    assert_eq!(b.state(), CircuitState::HalfOpen);
    // HalfOpen -> Closed on the second success.
    b.acquire(at(t, 250)).unwrap().success();
    assert_eq!(b.state(), CircuitState::Closed);
    b.acquire(at(t, 250)).unwrap().failure(t);
    assert_eq!(b.state(), CircuitState::Closed, "failures counted afresh");
}

#[test]
fn a_closed_breaker_reads_no_clock() {
    use core::cell::Cell;
    let reads = Cell::new(0u32);
    let t = Instant::now();
    let clock = || {
        reads.set(reads.get() + 1);
        t
    };
    let b = CircuitBreaker::new(2, 1, Duration::from_millis(100));
    b.acquire_timed(clock, crate::clock::for_async())
        .unwrap()
        .success();
    b.acquire_timed(clock, crate::clock::for_async())
        .unwrap()
        .failure(t);
    // Closed with a failure counted: still no clock, and a success resets.
    b.acquire_timed(clock, crate::clock::for_async())
        .unwrap()
        .success();
    assert_eq!(reads.get(), 0, "closed: no clock read");
    b.acquire_timed(clock, crate::clock::for_async())
        .unwrap()
        .failure(t);
    b.acquire_timed(clock, crate::clock::for_async())
        .unwrap()
        .failure(t);
    assert_eq!(
        b.state(),
        CircuitState::Open,
        "the reset count started afresh"
    );
    assert!(b.acquire_timed(clock, crate::clock::for_async()).is_err());
    assert_eq!(reads.get(), 1, "open: the clock is read");
    let later = at(t, 100);
    let trial = b
        .acquire_timed(|| later, crate::clock::for_async())
        .unwrap();
    assert!(trial.is_trial());
    trial.success();
    assert_eq!(b.state(), CircuitState::Closed);
}

#[test]
fn a_released_trial_frees_the_slot() {
    let b = CircuitBreaker::new(1, 1, Duration::from_secs(1));
    let t = Instant::now();
    b.acquire(t).unwrap().failure(t);
    let trial = b.acquire(at(t, 1000)).unwrap();
    assert!(b.acquire(at(t, 1000)).is_err());
    trial.release();
    assert_eq!(b.state(), CircuitState::HalfOpen);
    assert!(b.acquire(at(t, 1000)).unwrap().is_trial());
}

#[test]
fn zero_and_huge_thresholds_are_clamped() {
    let t = Instant::now();
    let b = CircuitBreaker::new(0, 0, Duration::MAX);
    b.acquire(t).unwrap().failure(t);
    assert_eq!(b.state(), CircuitState::Open);
    assert!(
        b.acquire(at(t, 1 << 40)).is_err(),
        "Duration::MAX never elapses"
    );
    let b = CircuitBreaker::new(u32::MAX, u32::MAX, Duration::ZERO);
    for _ in 0..COUNT_MAX - 1 {
        b.acquire(t).unwrap().failure(t);
    }
    assert_eq!(b.state(), CircuitState::Closed);
    b.acquire(t).unwrap().failure(t);
    assert_eq!(b.state(), CircuitState::Open, "u32::MAX acts as 16,383");
}

thread_local! {
    static NOW: core::cell::Cell<Option<Instant>> = const { core::cell::Cell::new(None) };
}

/// A clock for permits: the instant [`set_now`] last set on this thread.
fn fake_now() -> Instant {
    NOW.get().expect("set_now first")
}

fn set_now(t: Instant) {
    NOW.set(Some(t));
}

fn us(base: Instant, us: u64) -> Instant {
    base + Duration::from_micros(us)
}

#[test]
fn a_dropped_permit_is_a_failure_timed_by_its_clock() {
    let b = CircuitBreaker::new(2, 1, Duration::from_secs(1));
    let t = Instant::now();
    set_now(t);
    drop(b.acquire_on(fake_now).unwrap());
    assert_eq!(b.state(), CircuitState::Closed);
    // The second cancelled call, 5 s later: it opens, timed from then.
    set_now(at(t, 5000));
    drop(b.acquire_on(fake_now).unwrap());
    assert_eq!(b.state(), CircuitState::Open);
    assert!(b.acquire(at(t, 5999)).is_err());
    assert!(b.acquire(at(t, 6000)).unwrap().is_trial());
}

#[test]
fn a_dropped_trial_reopens_the_breaker() {
    let b = CircuitBreaker::new(1, 1, Duration::from_secs(1));
    let t = Instant::now();
    b.acquire(t).unwrap().failure(t);
    set_now(at(t, 1000));
    let trial = b.acquire_on(fake_now).unwrap();
    assert!(trial.is_trial());
    // The trial hangs; its timeout fires at 2 s and drops it.
    set_now(at(t, 2000));
    drop(trial);
    assert_eq!(b.state(), CircuitState::Open, "a timed-out trial reopens");
    assert!(b.acquire(at(t, 2999)).is_err());
    assert!(b.acquire(at(t, 3000)).unwrap().is_trial());
}

#[test]
fn a_hung_trial_gives_way_after_open_for() {
    let b = CircuitBreaker::new(1, 1, Duration::from_secs(1));
    let t = Instant::now();
    b.acquire(t).unwrap().failure(t);
    let hung = b.acquire(at(t, 1000)).unwrap();
    assert!(b.acquire(at(t, 1999)).is_err(), "the trial's claim holds");
    let trial = b.acquire(at(t, 2000)).unwrap();
    assert!(trial.is_trial(), "the claim lapsed after open_for");
    // The hung trial's late verdict belongs to a claim that lapsed.
    hung.failure(at(t, 2001));
    assert_eq!(b.state(), CircuitState::HalfOpen);
    trial.success();
    assert_eq!(b.state(), CircuitState::Closed);

    // A leaked permit (safe code) wedges the breaker for open_for only.
    b.acquire(at(t, 3000)).unwrap().failure(at(t, 3000));
    core::mem::forget(b.acquire(at(t, 4000)).unwrap());
    assert!(b.acquire(at(t, 4999)).is_err());
    assert!(b.acquire(at(t, 5000)).unwrap().is_trial());
}

#[test]
fn late_verdicts_of_an_earlier_generation_are_ignored() {
    let b = CircuitBreaker::new(2, 1, Duration::from_secs(1));
    let t = Instant::now();
    // Slow calls admitted before the outage.
    let (slow1, slow2) = (b.acquire(t).unwrap(), b.acquire(t).unwrap());
    let slow3 = b.acquire(t).unwrap();
    b.acquire(t).unwrap().failure(t);
    b.acquire(t).unwrap().failure(t);
    assert_eq!(b.state(), CircuitState::Open);
    b.acquire(at(t, 1000)).unwrap().success();
    assert_eq!(b.state(), CircuitState::Closed);
    // They fail 1 ms after the successful trial: old news.
    slow1.failure(at(t, 1001));
    slow2.failure(at(t, 1001));
    assert_eq!(b.state(), CircuitState::Closed);
    // A late success does not reset the new generation's count either.
    b.acquire(at(t, 1002)).unwrap().failure(at(t, 1002));
    slow3.success();
    b.acquire(at(t, 1003)).unwrap().failure(at(t, 1003));
    assert_eq!(b.state(), CircuitState::Open);
}

#[test]
fn an_open_for_below_a_millisecond_is_not_zero() {
    let b = CircuitBreaker::new(1, 1, Duration::from_micros(500));
    let t = Instant::now();
    b.acquire(t).unwrap().failure(t);
    assert!(b.acquire(us(t, 400)).is_err());
    assert!(!b.admits_at(us(t, 499)));
    assert!(b.acquire(us(t, 1000)).unwrap().is_trial());
}

#[test]
fn a_trial_never_comes_early_and_at_most_2_ms_late() {
    for open_us in [900, 1000, 1500] {
        let open_for = Duration::from_millis(1);
        for step in 0..60u64 {
            let b = CircuitBreaker::new(2, 1, open_for);
            let t = Instant::now();
            b.acquire(t).unwrap().failure(t); // the epoch
            b.acquire(us(t, open_us)).unwrap().failure(us(t, open_us));
            let d = step * 50; // µs after opening
            let admitted = b.acquire(us(t, open_us + d)).is_ok();
            assert!(!admitted || d >= 1000, "a trial {d} µs after opening");
            assert!(admitted || d < 3000, "no trial {d} µs after opening");
        }
    }
}

#[test]
fn an_open_period_across_the_time_horizon_ends() {
    let b = CircuitBreaker::new(2, 1, Duration::from_millis(100));
    let t = Instant::now();
    b.acquire(t).unwrap().failure(t); // the epoch
    let late = at(t, (1 << TIME_BITS) - 10);
    b.acquire(late).unwrap().failure(late);
    assert_eq!(b.state(), CircuitState::Open);
    assert!(b.acquire(at(t, (1 << TIME_BITS) + 50)).is_err());
    let trial = b.acquire(at(t, (1 << TIME_BITS) + 90)).unwrap();
    trial.success();
    assert_eq!(b.state(), CircuitState::Closed);
}

// The rate breaker.

/// A rate breaker opening at half of at least 4 calls in 10 s.
fn rate() -> CircuitBreaker {
    CircuitBreaker::rate(0.5, 4, Duration::from_secs(10), Duration::from_secs(30))
}

fn call(b: &CircuitBreaker, when: Instant, ok: bool) {
    set_now(when);
    let permit = b.acquire_on(fake_now).unwrap();
    if ok {
        permit.success();
    } else {
        permit.failure(when);
    }
}

#[test]
fn a_rate_breaker_opens_on_the_ratio_once_it_has_min_calls() {
    let b = rate();
    let t = Instant::now();
    for _ in 0..3 {
        call(&b, t, false);
    }
    assert_eq!(b.state(), CircuitState::Closed, "3 calls: fewer than 4");
    call(&b, t, false);
    assert_eq!(b.state(), CircuitState::Open);

    let b = rate();
    for ok in [true, true, true, false, true, false] {
        call(&b, t, ok);
        assert_eq!(b.state(), CircuitState::Closed, "below half");
    }
    call(&b, t, false); // 3 of 7
    assert_eq!(b.state(), CircuitState::Closed);
    call(&b, t, false); // 4 of 8
    assert_eq!(b.state(), CircuitState::Open);
}

#[test]
fn a_success_that_completes_min_calls_can_open_a_rate_breaker() {
    // (Found by the loom model: a success reported last left it closed.)
    let b = CircuitBreaker::rate(0.6, 3, Duration::from_secs(10), Duration::from_secs(1));
    let t = Instant::now();
    call(&b, t, false);
    call(&b, t, false);
    assert_eq!(b.state(), CircuitState::Closed);
    call(&b, t, true); // 2 of 3 failed
    assert_eq!(b.state(), CircuitState::Open);
}

#[test]
fn a_rate_breakers_window_slides() {
    let t = Instant::now();
    // Within the window: 3 old failures and a new one open it.
    let b = rate();
    for _ in 0..3 {
        call(&b, t, false);
    }
    call(&b, at(t, 9_999), false);
    assert_eq!(b.state(), CircuitState::Open);
    // 10 s later the old failures have slid out.
    let b = rate();
    for _ in 0..3 {
        call(&b, t, false);
    }
    call(&b, at(t, 10_000), false);
    assert_eq!(b.state(), CircuitState::Closed);
    call(&b, at(t, 10_500), true);
    call(&b, at(t, 10_500), false);
    assert_eq!(b.state(), CircuitState::Closed);
    call(&b, at(t, 19_999), false);
    assert_eq!(b.state(), CircuitState::Open, "3 of the last 4 failed");
}

#[test]
fn a_rate_breaker_half_opens_like_the_count_breaker() {
    let b = rate();
    let t = Instant::now();
    for ok in [true, false, false, false] {
        call(&b, t, ok);
    }
    assert_eq!(b.state(), CircuitState::Open);
    assert!(b.acquire(at(t, 29_999)).is_err());
    let trial = b.acquire(at(t, 30_000)).unwrap();
    assert!(b.acquire(at(t, 30_000)).is_err(), "one trial at a time");
    trial.failure(at(t, 30_000));
    assert_eq!(b.state(), CircuitState::Open);
    let slow = {
        set_now(at(t, 59_000));
        b.acquire_on(fake_now)
    };
    assert!(slow.is_err());
    call(&b, at(t, 60_000), true);
    assert_eq!(b.state(), CircuitState::Closed);
    // The window starts empty: 1 failure in 4 is below half (with the
    // window before the outage it would be 4 of 8).
    for ok in [true, true, true, false] {
        call(&b, at(t, 60_001), ok);
    }
    assert_eq!(b.state(), CircuitState::Closed);
}

#[test]
fn a_rate_breaker_ignores_late_verdicts_and_counts_dropped_permits() {
    let b = rate();
    let t = Instant::now();
    set_now(t);
    let slow: Vec<_> = (0..4).map(|_| b.acquire_on(fake_now).unwrap()).collect();
    for _ in 0..4 {
        drop(b.acquire_on(fake_now).unwrap()); // cancelled: failures
    }
    assert_eq!(b.state(), CircuitState::Open);
    call(&b, at(t, 30_000), true);
    assert_eq!(b.state(), CircuitState::Closed);
    set_now(at(t, 30_001));
    drop(slow); // four late cancellations of the old generation
    assert_eq!(b.state(), CircuitState::Closed);
}

#[test]
fn odd_rate_arguments_are_clamped() {
    let t = Instant::now();
    for ratio in [f64::NAN, -1.0, 0.0] {
        let b = CircuitBreaker::rate(ratio, 0, Duration::ZERO, Duration::MAX);
        call(&b, t, true);
        assert_eq!(b.state(), CircuitState::Closed, "no failure, no trip");
        call(&b, t, false);
        assert_eq!(b.state(), CircuitState::Open, "{ratio}: one failure trips");
        assert!(
            b.acquire(at(t, 1 << 40)).is_err(),
            "Duration::MAX never ends"
        );
    }
    let b = CircuitBreaker::rate(7.0, 2, Duration::from_secs(1), Duration::ZERO);
    call(&b, t, true);
    call(&b, t, false);
    assert_eq!(b.state(), CircuitState::Closed, "above 1 acts as 1");
    call(&b, at(t, 2000), false);
    call(&b, at(t, 2000), false);
    assert_eq!(b.state(), CircuitState::Open);
}

#[test]
fn statics_are_sync_and_const() {
    static COUNT: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(1));
    static RATE: CircuitBreaker =
        CircuitBreaker::rate(0.5, 10, Duration::from_secs(10), Duration::from_secs(1));
    fn assert<T: Send + Sync>(_: &T) {}
    assert(&COUNT);
    assert(&RATE);
}

/// The fleet's gate: held open, a trial only with a grant (one), a
/// refusal marks the trial as wanted, release with or without closing.
#[test]
fn the_fleet_gate() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicU32;
    let wakes = Arc::new(AtomicU32::new(0));
    let b = CircuitBreaker::new(3, 1, Duration::from_millis(100));
    let w = Arc::clone(&wakes);
    assert!(
        RemoteView::attach(
            &b,
            Box::new(move || {
                w.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
            })
        )
        .is_some()
    );
    assert!(
        RemoteView::attach(&b, Box::new(|| {})).is_none(),
        "one fleet"
    );
    let t = Instant::now();
    // A failure wakes the fleet's thread; the report is the count.
    b.acquire(t).unwrap().failure(t);
    assert_eq!(wakes.load(core::sync::atomic::Ordering::Relaxed), 1);
    assert_eq!(
        RemoteView::of(&b).report(t),
        Report::Count {
            failures: 1,
            run: 1,
            threshold: 3,
        }
    );
    // A success after it ends the run (counted once) and wakes it.
    b.acquire(t).unwrap().success();
    assert_eq!(wakes.load(core::sync::atomic::Ordering::Relaxed), 2);
    assert_eq!(RemoteView::of(&b).run_ends(), 1);
    assert_eq!(
        RemoteView::of(&b).report(t),
        Report::Count {
            failures: 1,
            run: 0,
            threshold: 3,
        }
    );
    // Held: open, and nothing passes, not even after open_for.
    RemoteView::of(&b).hold(t);
    assert!(RemoteView::of(&b).held());
    assert_eq!(b.state(), CircuitState::Open);
    assert_eq!(
        RemoteView::of(&b).report(t),
        Report::Count {
            failures: 1,
            run: 0,
            threshold: 3,
        },
        "held: no run"
    );
    assert!(b.acquire(at(t, 500)).is_err());
    assert_eq!(
        RemoteView::of(&b).take_want(),
        TrialWanted {
            wanted: true,
            grant_unused: false
        }
    );
    // A grant: one trial, at once (the fleet timed it).
    RemoteView::of(&b).grant();
    let trial = b.acquire(at(t, 1)).unwrap();
    assert!(trial.is_trial());
    assert!(b.acquire(at(t, 1)).is_err());
    assert_eq!(
        RemoteView::of(&b).take_want(),
        TrialWanted {
            wanted: true,
            grant_unused: false
        }
    );
    trial.failure(at(t, 2));
    assert!(b.acquire(at(t, 600)).is_err(), "the grant was used");
    // A grant not used for a trial (the trial slot is taken) is kept.
    RemoteView::of(&b).grant();
    let trial = b.acquire(at(t, 3)).unwrap();
    RemoteView::of(&b).grant();
    assert!(b.acquire(at(t, 3)).is_err());
    assert_eq!(
        RemoteView::of(&b).take_want(),
        TrialWanted {
            wanted: true,
            grant_unused: true
        }
    );
    trial.success();
    assert_eq!(b.state(), CircuitState::Closed);
    // (Held and closed: the sync thread reports the trial's success and
    // releases it.)
    assert!(RemoteView::of(&b).held());
    RemoteView::of(&b).release(true);
    // Released without closing: local rules again (open_for from the
    // hold).
    RemoteView::of(&b).hold(at(t, 10));
    RemoteView::of(&b).release(false);
    assert!(!RemoteView::of(&b).held());
    assert!(b.acquire(at(t, 50)).is_err());
    assert!(b.acquire(at(t, 111)).unwrap().is_trial());
    // Released closing: closed, whatever it was.
    RemoteView::of(&b).hold(at(t, 200));
    RemoteView::of(&b).release(true);
    assert_eq!(b.state(), CircuitState::Closed);
    assert!(b.acquire(at(t, 200)).is_ok());
}
