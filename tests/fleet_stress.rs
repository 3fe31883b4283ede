//! The fleet controls under pressure: [`RetryBudget`] and [`CircuitBreaker`]
//! hammered by 8 threads (6,000,000 budget and 1,500,000 breaker
//! operations in all, each contention test at least 500,000), the breaker's
//! state machine transition by transition and against a reference model,
//! and `#[retry]` futures using both, dropped at every await point or
//! panicking, which must leave them consistent.
//!
//! What each test guards:
//!
//! - `budget_*`: the token count never goes below zero or above the bucket's
//!   size, whatever the interleaving, and no spend or deposit is lost
//!   (where nothing is clipped, the final count is exactly the arithmetic
//!   of the operations that succeeded; where deposits are clipped, no more
//!   was spent than the bucket held and earned).
//! - `breaker_every_transition`, `breaker_matches_a_reference_model`: every
//!   edge of closed/open/half-open, and 200,000 random single-threaded steps
//!   checked against a straightforward model after each step (with its
//!   generations: a permit reports only to the state that admitted it; a
//!   permit dropped without a verdict is a failure; a trial's claim lapses
//!   after `open_for`).
//! - `breaker_*_under_contention`: no failure report is lost (the breaker
//!   opens exactly when the threshold-th failure has been reported, never
//!   before it has been started), and at most one half-open trial is ever
//!   in flight; the packed state word stays well-formed.
//! - `dropped_*`, `panicking_*`: cancellation mid-attempt or mid-sleep, and
//!   a panicking body, lose no token beyond a retry already granted, and
//!   report to the breaker every attempt that started: one cancelled or
//!   panicking mid-attempt is a failure (a hung dependency must open the
//!   breaker, and a timed-out trial reopens it), one dropped mid-sleep was
//!   already reported.
//!
//! The breaker's packed word is read through its `Debug` output (see
//! [`Word`]): the layout mirrors `backoff-runtime/src/circuit.rs`.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use backoff_runtime::{CircuitBreaker, CircuitOpen, CircuitState, RetryBudget, retry};
use backoff_workspace_tests::block_on_paused;

const THREADS: usize = 8;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// xorshift64*: a small, fast, seedable generator (one per thread).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A budget's tokens in thousandths, its resolution (exact: the count is an
/// integer of thousandths, and `tokens()` divides it by 1000).
fn milli(b: &RetryBudget) -> u64 {
    let t = b.tokens() * 1000.0;
    let m = t.round();
    assert!(
        (t - m).abs() < 1e-6,
        "not a whole number of thousandths: {t}"
    );
    m as u64
}

/// The breaker's packed state word, decoded: `| state: 2 | generation: 8 |
/// trial: 1 | count: 14 | time ms: 39 |` (backoff-runtime/src/circuit.rs),
/// read through `Debug` since it is private.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Word {
    state: u64,
    generation: u64,
    count: u64,
    trial: bool,
    opened_at: u64,
}

impl Word {
    fn of(b: &CircuitBreaker) -> Word {
        let debug = format!("{b:?}");
        let word: u64 = debug
            .split("word: ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|digits| digits.parse().ok())
            .unwrap_or_else(|| panic!("no packed word in {debug}"));
        Word {
            state: word >> 62,
            generation: (word >> 54) & 0xFF,
            count: (word >> 39) & ((1 << 14) - 1),
            trial: word & (1 << 53) != 0,
            opened_at: word & ((1 << 39) - 1),
        }
    }

    /// Well-formed for thresholds `failures` and `successes`: a known state,
    /// a count below the threshold that would have moved it on, a trial only
    /// when half-open, no count while open.
    fn check(self, failures: u64, successes: u64) {
        match self.state {
            0 => assert!(
                self.count < failures && !self.trial && self.opened_at == 0,
                "closed: {self:?}"
            ),
            1 => assert!(self.count == 0 && !self.trial, "open: {self:?}"),
            2 => assert!(self.count < successes, "half-open: {self:?}"),
            _ => panic!("not a state: {self:?}"),
        }
    }
}

// ---------------------------------------------------------------------------
// RetryBudget under contention
// ---------------------------------------------------------------------------

/// Per-thread tallies of what succeeded, and of what was observed.
#[derive(Default, Debug, Clone, Copy)]
struct Tally {
    spent: u64,
    refused: u64,
    deposits: u64,
    /// Observations of an empty bucket (less than one token).
    seen_empty: u64,
    /// Observations of a full bucket.
    seen_full: u64,
}

impl std::ops::Add for Tally {
    type Output = Tally;
    fn add(self, o: Tally) -> Tally {
        Tally {
            spent: self.spent + o.spent,
            refused: self.refused + o.refused,
            deposits: self.deposits + o.deposits,
            seen_empty: self.seen_empty + o.seen_empty,
            seen_full: self.seen_full + o.seen_full,
        }
    }
}

/// 8 threads × `ops` random operations on a bucket of `max` tokens refilled
/// by `ratio`, depositing with probability `deposit_in_16` / 16 (when it may).
///
/// A thread deposits only against credit earned by its own successful
/// spends (one token each), so that at every instant the tokens deposited
/// so far are at most the tokens spent so far: a deposit then never finds
/// the bucket less than `ratio` below its cap, nothing is clipped, and the
/// final count must be exactly `max − spent + deposits · ratio`, and since
/// each thread repays all its credit before it stops, exactly `max`. After
/// every operation the count must lie in `0..=max` and be a whole multiple
/// of the smallest step. (`Tally::seen_*` show how often the edges were
/// met; how often depends on the scheduling.)
fn exact_accounting(max: u32, ratio: f64, deposit_in_16: u64, ops: u64) -> Tally {
    let budget = RetryBudget::new(max, ratio);
    let max_milli = u64::from(max) * 1000;
    let refill = (ratio * 1000.0).round() as u64;
    assert!(
        refill > 0 && 1000 % refill == 0,
        "choose a ratio dividing 1"
    );
    let total = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS as u64)
            .map(|id| {
                let budget = &budget;
                s.spawn(move || {
                    let mut rng = Rng::new(id + 1);
                    let (mut tally, mut credit) = (Tally::default(), 0u64);
                    let observe = |tally: &mut Tally| {
                        let t = milli(budget);
                        assert!(t <= max_milli, "above the cap: {t}");
                        assert_eq!(t % refill, 0, "not a multiple of the refill: {t}");
                        tally.seen_empty += u64::from(t < 1000);
                        tally.seen_full += u64::from(t == max_milli);
                    };
                    for _ in 0..ops {
                        if credit >= refill && rng.below(16) < deposit_in_16 {
                            budget.deposit();
                            credit -= refill;
                            tally.deposits += 1;
                        } else if budget.try_spend() {
                            credit += 1000;
                            tally.spent += 1;
                        } else {
                            tally.refused += 1;
                        }
                        observe(&mut tally);
                    }
                    // Repay what is left: then every thread's spends are
                    // matched, and the bucket must end exactly full.
                    while credit >= refill {
                        budget.deposit();
                        credit -= refill;
                        tally.deposits += 1;
                        observe(&mut tally);
                    }
                    tally
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a worker panicked"))
            .fold(Tally::default(), |a, b| a + b)
    });
    assert_eq!(
        milli(&budget),
        max_milli + refill * total.deposits - 1000 * total.spent,
        "lost updates: {total:?}"
    );
    assert_eq!(refill * total.deposits, 1000 * total.spent, "all repaid");
    assert_eq!(milli(&budget), max_milli, "lost updates: {total:?}");
    total
}

#[test]
fn budget_loses_no_update_while_it_drains_and_refuses() {
    // Half a token back per deposit, a deposit (when the thread has credit)
    // 10 times in 16: the bucket drains, then hovers around empty, so
    // `try_spend` keeps meeting both answers. 2,000,000 operations.
    let t = exact_accounting(64, 0.5, 10, 250_000);
    assert!(t.spent > 64 && t.refused > 0 && t.seen_empty > 0, "{t:?}");
}

#[test]
fn budget_loses_no_update_while_it_refills_to_the_brim() {
    // A whole token back per deposit, a deposit 12 times in 16: the bucket
    // climbs back exactly to its size over and over (the deposit that lands
    // on the cap is not clipped) and is drained in between. 2,000,000
    // operations.
    let t = exact_accounting(16, 1.0, 12, 250_000);
    assert!(t.spent > 16 && t.deposits > 16, "{t:?}");
}

#[test]
fn budget_stays_within_bounds_when_deposits_are_clipped() {
    // Unconstrained random spends and deposits on a tiny bucket: deposits hit
    // the cap (and are clipped), spends hit zero. Observed after every
    // operation: 0 ≤ tokens ≤ max. At the end: no more was spent than the
    // bucket held plus what was deposited. 2,000,000 operations.
    const OPS: u64 = 250_000;
    let budget = RetryBudget::new(5, 0.7);
    let total = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS as u64)
            .map(|id| {
                let budget = &budget;
                s.spawn(move || {
                    let mut rng = Rng::new(100 + id);
                    let mut tally = Tally::default();
                    for _ in 0..OPS {
                        if rng.below(2) == 0 {
                            budget.deposit();
                            tally.deposits += 1;
                        } else if budget.try_spend() {
                            tally.spent += 1;
                        } else {
                            tally.refused += 1;
                        }
                        let t = budget.tokens();
                        assert!((0.0..=5.0).contains(&t), "out of bounds: {t}");
                    }
                    tally
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a worker panicked"))
            .fold(Tally::default(), |a, b| a + b)
    });
    let end = milli(&budget);
    assert!(end <= 5000);
    // end = 5000 − 1000·spent + (deposits that counted) ≤ … + 700·deposits
    assert!(
        1000 * total.spent + end <= 5000 + 700 * total.deposits,
        "spent more than it held: {total:?}, {end}"
    );
    assert!(
        total.refused > 0 && total.spent > 0,
        "both edges hit: {total:?}"
    );
}

// ---------------------------------------------------------------------------
// CircuitBreaker: the state machine
// ---------------------------------------------------------------------------

#[test]
fn breaker_every_transition() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let b = CircuitBreaker::new(3, 2, Duration::from_millis(100));
    let word = |b: &CircuitBreaker| Word::of(b);

    // Closed --success--> Closed (nothing to reset).
    b.acquire(at(0)).unwrap().success();
    assert_eq!((b.state(), word(&b).count), (CircuitState::Closed, 0));
    // Closed --failure below threshold--> Closed, counted.
    b.acquire(at(0)).unwrap().failure(at(0));
    assert_eq!((b.state(), word(&b).count), (CircuitState::Closed, 1));
    // Closed --dropped permit (a cancelled call)--> a failure, counted.
    drop(b.acquire(at(0)).unwrap());
    assert_eq!((b.state(), word(&b).count), (CircuitState::Closed, 2));
    // Closed --released permit (no call made)--> Closed, unchanged.
    b.acquire(at(0)).unwrap().release();
    assert_eq!(word(&b).count, 2);
    // Closed --success--> Closed, count reset.
    b.acquire(at(0)).unwrap().success();
    assert_eq!(word(&b).count, 0);
    // Closed --threshold-th consecutive failure--> Open, timed from the
    // failure (reported at 10), not from the acquire (at 0).
    let stale_success = b.acquire(at(0)).unwrap();
    let stale_failure = b.acquire(at(0)).unwrap();
    for _ in 0..2 {
        b.acquire(at(0)).unwrap().failure(at(0));
    }
    let last = b.acquire(at(0)).unwrap();
    assert!(!last.is_trial());
    last.failure(at(10));
    assert_eq!(b.state(), CircuitState::Open);
    assert_eq!(word(&b).count, 0);
    // Open: refused until open_for has passed, and the refusal says when.
    assert_eq!(
        b.acquire(at(10)).unwrap_err().retry_in(),
        Some(Duration::from_millis(100))
    );
    assert_eq!(
        b.acquire(at(60)).unwrap_err().retry_in(),
        Some(Duration::from_millis(50))
    );
    assert!(b.acquire(at(109)).is_err());
    // Open: reports of calls let through while closed change nothing (a late
    // failure does not re-time the opening).
    let before = word(&b);
    stale_success.success();
    stale_failure.failure(at(50));
    assert_eq!(word(&b), before);
    // Open --open_for elapsed--> HalfOpen with one trial.
    let trial = b.acquire(at(110)).unwrap();
    assert!(trial.is_trial());
    assert_eq!(b.state(), CircuitState::HalfOpen);
    // HalfOpen with a trial in flight: everyone else is refused.
    assert!(b.acquire(at(110)).is_err());
    assert!(b.acquire(at(209)).is_err());
    // HalfOpen --trial released (not made)--> HalfOpen, slot free.
    trial.release();
    assert_eq!(b.state(), CircuitState::HalfOpen);
    assert!(!word(&b).trial);
    // HalfOpen --trial dropped (cancelled)--> Open, timed by its clock.
    set_now(at(112));
    drop(b.acquire_on(fake_now).unwrap());
    assert_eq!(b.state(), CircuitState::Open);
    assert!(b.acquire(at(211)).is_err());
    // HalfOpen --trial failure--> Open, timed from the failure.
    let trial = b.acquire(at(212)).unwrap();
    assert!(trial.is_trial());
    trial.failure(at(230));
    assert_eq!(b.state(), CircuitState::Open);
    assert!(b.acquire(at(329)).is_err());
    // HalfOpen --trial success below success_threshold--> HalfOpen, slot free.
    let second = {
        let trial = b.acquire(at(330)).unwrap();
        assert!(trial.is_trial());
        trial.success();
        assert_eq!(b.state(), CircuitState::HalfOpen);
        assert_eq!((word(&b).count, word(&b).trial), (1, false));
        b.acquire(at(330)).unwrap()
    };
    assert!(second.is_trial());
    // HalfOpen --trial failure after a success--> Open, successes forgotten.
    second.failure(at(340));
    assert_eq!(b.state(), CircuitState::Open);
    // HalfOpen with a trial that hangs: its claim lapses after open_for,
    // and its late verdict is ignored.
    let hung = b.acquire(at(440)).unwrap();
    assert!(hung.is_trial());
    assert!(b.acquire(at(539)).is_err());
    let trial = b.acquire(at(540)).unwrap();
    assert!(trial.is_trial());
    hung.failure(at(541));
    assert_eq!(b.state(), CircuitState::HalfOpen);
    // HalfOpen --success_threshold-th trial success--> Closed.
    trial.success();
    b.acquire(at(540)).unwrap().success();
    assert_eq!(b.state(), CircuitState::Closed);
    let fresh = Word::of(&CircuitBreaker::new(3, 2, Duration::ZERO));
    assert_eq!(
        Word {
            generation: 0,
            ..word(&b)
        },
        fresh,
        "closed afresh, in a later generation"
    );
    assert_ne!(word(&b).generation, 0);
    // Closed again: failures counted from zero.
    b.acquire(at(540)).unwrap().failure(at(540));
    b.acquire(at(540)).unwrap().failure(at(540));
    assert_eq!(b.state(), CircuitState::Closed);
}

thread_local! {
    static NOW: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// A permit's clock: the instant [`set_now`] last set on this thread.
fn fake_now() -> Instant {
    NOW.get().expect("set_now first")
}

fn set_now(t: Instant) {
    NOW.set(Some(t));
}

#[test]
fn breaker_non_trial_reports_do_not_move_a_half_open_breaker() {
    let t0 = Instant::now();
    let b = CircuitBreaker::new(1, 1, Duration::ZERO);
    let early = b.acquire(t0).unwrap();
    let early2 = b.acquire(t0).unwrap();
    b.acquire(t0).unwrap().failure(t0);
    let trial = b.acquire(t0).unwrap();
    assert!(trial.is_trial());
    let before = Word::of(&b);
    early.success();
    early2.failure(t0);
    assert_eq!(Word::of(&b), before, "only the trial decides");
    trial.success();
    assert_eq!(b.state(), CircuitState::Closed);
}

/// The breaker's contract, written the plain way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Closed {
        failures: u64,
    },
    Open {
        at: u64,
    },
    HalfOpen {
        successes: u64,
        trial: bool,
        claimed: u64,
    },
}

/// The shape and its generation: every change of shape and every trial
/// claimed starts a new one, and a permit reports only to its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Model {
    shape: Shape,
    generation: u64,
}

impl Model {
    fn next(&mut self, shape: Shape) {
        self.shape = shape;
        self.generation += 1;
    }

    /// A permit: whether it is the trial, and its generation.
    fn acquire(&mut self, now: u64, open_for: u64) -> Result<(bool, u64), CircuitOpen> {
        match self.shape {
            Shape::Closed { .. } => return Ok((false, self.generation)),
            Shape::Open { at } if now - at >= open_for => self.next(Shape::HalfOpen {
                successes: 0,
                trial: true,
                claimed: now,
            }),
            Shape::HalfOpen {
                successes,
                trial,
                claimed,
            } if !trial || now - claimed >= open_for.max(1) => self.next(Shape::HalfOpen {
                successes,
                trial: true,
                claimed: now,
            }),
            // Open: the refusal says when the trial is due; half-open with
            // its trial running: the trial's verdict decides.
            Shape::Open { at } => {
                return Err(CircuitOpen::after(Duration::from_millis(
                    open_for - (now - at),
                )));
            }
            _ => return Err(CircuitOpen::default()),
        }
        Ok((true, self.generation))
    }

    fn success(&mut self, generation: u64, needed: u64) {
        if generation != self.generation {
            return;
        }
        match self.shape {
            Shape::Closed { .. } => self.shape = Shape::Closed { failures: 0 },
            Shape::HalfOpen {
                successes,
                trial: true,
                ..
            } if successes + 1 >= needed => self.next(Shape::Closed { failures: 0 }),
            Shape::HalfOpen {
                successes,
                trial: true,
                claimed,
            } => {
                self.shape = Shape::HalfOpen {
                    successes: successes + 1,
                    trial: false,
                    claimed,
                }
            }
            _ => {}
        }
    }

    fn failure(&mut self, generation: u64, now: u64, threshold: u64) {
        if generation != self.generation {
            return;
        }
        match self.shape {
            Shape::Closed { failures } if failures + 1 >= threshold => {
                self.next(Shape::Open { at: now })
            }
            Shape::Closed { failures } => {
                self.shape = Shape::Closed {
                    failures: failures + 1,
                }
            }
            Shape::HalfOpen { trial: true, .. } => self.next(Shape::Open { at: now }),
            _ => {}
        }
    }

    fn release(&mut self, generation: u64) {
        if let Shape::HalfOpen {
            successes,
            trial: true,
            claimed,
        } = self.shape
            && generation == self.generation
        {
            self.shape = Shape::HalfOpen {
                successes,
                trial: false,
                claimed,
            };
        }
    }

    fn state(self) -> CircuitState {
        match self.shape {
            Shape::Closed { .. } => CircuitState::Closed,
            Shape::Open { .. } => CircuitState::Open,
            Shape::HalfOpen { .. } => CircuitState::HalfOpen,
        }
    }

    /// The packed word's count, trial bit and generation (mod 256).
    fn count_trial_generation(self) -> (u64, bool, u64) {
        let (count, trial) = match self.shape {
            Shape::Closed { failures } => (failures, false),
            Shape::Open { .. } => (0, false),
            Shape::HalfOpen {
                successes, trial, ..
            } => (successes, trial),
        };
        (count, trial, self.generation % 256)
    }
}

#[test]
fn breaker_matches_a_reference_model() {
    // 200,000 random single-threaded steps, with up to 6 permits held at
    // once and reported in any order (success, failure, release, or dropped
    // without a verdict), time moving 0–29 ms a step: after every step the
    // breaker and the model agree on the state, the count, the trial bit
    // and the generation. In particular closed → open happens exactly at
    // the threshold-th consecutive failure of the current generation.
    const FAILURES: u64 = 4;
    const SUCCESSES: u64 = 3;
    const OPEN_FOR: u64 = 50;
    let t0 = Instant::now();
    let b = CircuitBreaker::new(4, 3, Duration::from_millis(OPEN_FOR));
    let mut model = Model {
        shape: Shape::Closed { failures: 0 },
        generation: 0,
    };
    let mut held = Vec::new();
    let mut rng = Rng::new(7);
    let mut now = 0u64;
    let (mut opened, mut trials, mut closed_again, mut lapsed, mut late) = (0, 0, 0, 0, 0);
    for step in 0..200_000 {
        now += rng.below(30);
        let instant = t0 + Duration::from_millis(now);
        set_now(instant);
        let roll = rng.below(10);
        if held.is_empty() || (roll < 4 && held.len() < 6) {
            let was = model;
            let got = b.acquire_on(fake_now).map(|p| {
                let trial = p.is_trial();
                held.push((p, model.generation + u64::from(trial)));
                trial
            });
            let want = model.acquire(now, OPEN_FOR);
            assert_eq!(
                got,
                want.map(|w| w.0),
                "step {step}: acquire at {now}, {was:?}"
            );
            trials += u32::from(matches!(want, Ok((true, _))));
            lapsed += u32::from(matches!(
                (was.shape, want),
                (Shape::HalfOpen { trial: true, .. }, Ok(_))
            ));
        } else {
            let (permit, generation) = held.swap_remove(rng.below(held.len() as u64) as usize);
            let was = model;
            late += u32::from(generation != model.generation);
            match roll {
                4..=6 => {
                    permit.failure(instant);
                    model.failure(generation, now, FAILURES);
                }
                7..=8 => {
                    permit.success();
                    model.success(generation, SUCCESSES);
                }
                _ if rng.below(2) == 0 => {
                    permit.release();
                    model.release(generation);
                }
                _ => {
                    drop(permit);
                    model.failure(generation, now, FAILURES);
                }
            }
            opened +=
                u32::from(was.state() != CircuitState::Open && model.state() == CircuitState::Open);
            closed_again += u32::from(
                was.state() == CircuitState::HalfOpen && model.state() == CircuitState::Closed,
            );
        }
        assert_eq!(b.state(), model.state(), "step {step}: {model:?}");
        let w = Word::of(&b);
        w.check(FAILURES, SUCCESSES);
        assert_eq!(
            (w.count, w.trial, w.generation),
            model.count_trial_generation(),
            "step {step}"
        );
    }
    assert!(
        opened > 100 && trials > 100 && closed_again > 10 && lapsed > 10 && late > 100,
        "every edge exercised: {opened} {trials} {closed_again} {lapsed} {late}"
    );
}

// ---------------------------------------------------------------------------
// CircuitBreaker under contention
// ---------------------------------------------------------------------------

#[test]
fn breaker_loses_no_failure_under_contention() {
    // Fresh breakers with a threshold of 16,000; 8 threads report failures
    // as fast as they can until it opens. The report that brings the number
    // of completed reports to the threshold must find it open (a lost
    // increment would leave it closed), and nobody may see it open before
    // the threshold number of reports has started.
    const THRESHOLD: u32 = 16_000;
    let now = Instant::now();
    let mut ops = 0;
    for _round in 0..32 {
        let b = CircuitBreaker::new(THRESHOLD, 1, Duration::from_secs(3600));
        let started = AtomicU32::new(0);
        let done = AtomicU32::new(0);
        let refused = AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|| {
                    while let Ok(permit) = b.acquire(now) {
                        started.fetch_add(1, SeqCst);
                        permit.failure(now);
                        let n = done.fetch_add(1, SeqCst) + 1;
                        if n >= THRESHOLD {
                            assert_eq!(b.state(), CircuitState::Open, "after {n} failures");
                        }
                        if b.state() == CircuitState::Open {
                            let started = started.load(SeqCst);
                            assert!(started >= THRESHOLD, "open after {started}");
                        }
                    }
                    refused.fetch_add(1, SeqCst);
                });
            }
        });
        assert_eq!(b.state(), CircuitState::Open);
        assert!(done.load(SeqCst) >= THRESHOLD);
        assert!(done.load(SeqCst) < THRESHOLD + THREADS as u32);
        Word::of(&b).check(u64::from(THRESHOLD), 1);
        ops += done.load(SeqCst) + refused.load(SeqCst);
    }
    assert!(ops >= 500_000, "{ops}");
}

#[test]
fn breaker_admits_one_trial_at_a_time_under_contention() {
    // open_for = 0: whenever it opens, the next caller gets the trial. 8
    // threads acquire and report success, failure, a release (no call) or
    // nothing (a cancelled call, a failure) at random; a counter incremented
    // while a trial permit is held must never exceed one; the packed word
    // stays well-formed; at the end no trial slot is left taken. The clock
    // stands still (a trial's claim lapses after open_for, at least 1 ms,
    // and a thread preempted for that long is not what is tested here).
    // At least OPS operations per thread, and more until enough trials and
    // refusals were seen (how many a run gets depends on the scheduler: a
    // loaded machine interleaves the threads less), up to MAX_OPS.
    const OPS: u64 = 125_000;
    const MAX_OPS: u64 = 4_000_000;
    let b = CircuitBreaker::new(3, 2, Duration::ZERO);
    let in_trial = AtomicUsize::new(0);
    let trials = AtomicU64::new(0);
    let refused = AtomicU64::new(0);
    std::thread::scope(|s| {
        for id in 0..THREADS as u64 {
            let (b, in_trial, trials, refused) = (&b, &in_trial, &trials, &refused);
            s.spawn(move || {
                let mut rng = Rng::new(1000 + id);
                let mut op = 0;
                while op < MAX_OPS
                    && (op < OPS || trials.load(SeqCst) <= 1000 || refused.load(SeqCst) == 0)
                {
                    op += 1;
                    let now = frozen();
                    match b.acquire_on(frozen) {
                        Ok(permit) => {
                            if permit.is_trial() {
                                let others = in_trial.fetch_add(1, SeqCst);
                                assert_eq!(others, 0, "two trials in flight");
                                trials.fetch_add(1, SeqCst);
                                if rng.below(4) == 0 {
                                    std::thread::yield_now();
                                }
                                in_trial.fetch_sub(1, SeqCst);
                            }
                            match rng.below(9) {
                                0..=2 => permit.success(),
                                3..=5 => permit.failure(now),
                                6 => permit.release(),
                                _ => drop(permit),
                            }
                        }
                        Err(CircuitOpen { .. }) => {
                            refused.fetch_add(1, SeqCst);
                        }
                    }
                    if op % 4 == 0 {
                        Word::of(b).check(3, 2);
                    }
                }
            });
        }
    });
    let (trials, refused) = (trials.load(SeqCst), refused.load(SeqCst));
    assert!(
        trials > 1000 && refused > 0,
        "{trials} trials, {refused} refused"
    );
    let w = Word::of(&b);
    w.check(3, 2);
    assert!(!w.trial, "a trial slot leaked: {w:?}");
    // open_for is zero, so whatever the state a call is let through.
    assert!(b.acquire(frozen()).is_ok());
}

/// A clock that stands still.
fn frozen() -> Instant {
    static T0: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *T0.get_or_init(Instant::now)
}

// ---------------------------------------------------------------------------
// Cancellation and panics of `#[retry]` futures with a budget and a breaker
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    Transient,
    Open,
}

impl From<CircuitOpen> for Failure {
    fn from(_: CircuitOpen) -> Self {
        Failure::Open
    }
}

/// Failures before the breakers of these tests open.
const FAILURES: u32 = 3;
/// How long they stay open.
const OPEN_FOR: Duration = Duration::from_secs(10);

/// One attempt of the body under test: 500 ms of work, then a failure, or a
/// panic on run `panic_on` (counting from 1).
async fn attempt(runs: &AtomicU32, panic_on: u32) -> Result<u32, Failure> {
    let run = runs.fetch_add(1, SeqCst) + 1;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_ne!(run, panic_on, "the body panics on run {run}");
    Err(Failure::Transient)
}

/// Catches a panic of the future it wraps.
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// A case: the breaker is open (for `OPEN_FOR`) before the call or not, the
/// body panics on a given run or not, the call's future is dropped at a
/// given time or not; then what the budget and the breaker must say.
#[derive(Debug, Clone, Copy)]
struct Case {
    open_first: bool,
    panic_on: u32,
    drop_at_ms: Option<u64>,
    outcome: Outcome,
    tokens: u64,
    after: After,
}

/// How the call ends.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    Dropped,
    Panicked,
    Returned(Failure),
}

/// The breaker afterwards.
#[derive(Debug, Clone, Copy)]
enum After {
    /// Closed, with this many failures counted.
    Closed(u32),
    /// Open since this many ms after the call began.
    OpenSince(u64),
}

/// Runs `case` with `call`, a `#[retry]` async fn using `budget` (10
/// tokens) and `breaker`, constant 1 s, 3 attempts, each attempt 500 ms.
///
/// The timeline of a call that is let through and keeps failing: attempt 1
/// in 0–500 ms, sleep until 1500 (a token spent at 500), attempt 2 until
/// 2000, sleep until 3000 (a token), attempt 3 until 3500, give up.
fn run<F, Fut>(case: Case, budget: &RetryBudget, breaker: &CircuitBreaker, call: F)
where
    F: Fn(Arc<AtomicU32>, u32) -> Fut,
    Fut: Future<Output = Result<u32, Failure>>,
{
    block_on_paused(async {
        let clock = || tokio::time::Instant::now().into_std();
        if case.open_first {
            for _ in 0..FAILURES {
                breaker.acquire(clock()).unwrap().failure(clock());
            }
            assert_eq!(breaker.state(), CircuitState::Open);
            tokio::time::sleep(OPEN_FOR).await;
        }
        let start = tokio::time::Instant::now();
        let runs = Arc::new(AtomicU32::new(0));
        let future = CatchUnwind(Box::pin(call(runs.clone(), case.panic_on)));
        let outcome = match case.drop_at_ms {
            Some(ms) => match tokio::time::timeout(Duration::from_millis(ms), future).await {
                Err(_) => Outcome::Dropped,
                Ok(Err(_)) => Outcome::Panicked,
                Ok(Ok(r)) => Outcome::Returned(r.expect_err("the body never succeeds")),
            },
            None => match future.await {
                Err(_) => Outcome::Panicked,
                Ok(r) => Outcome::Returned(r.expect_err("the body never succeeds")),
            },
        };
        assert_eq!(outcome, case.outcome, "{case:?}");
        assert_eq!(milli(budget), case.tokens, "tokens after {case:?}");
        match case.after {
            After::Closed(failures) => {
                assert_eq!(breaker.state(), CircuitState::Closed, "{case:?}");
                for _ in failures + 1..FAILURES {
                    breaker.acquire(clock()).unwrap().failure(clock());
                    assert_eq!(breaker.state(), CircuitState::Closed, "{case:?}");
                }
                breaker.acquire(clock()).unwrap().failure(clock());
                assert_eq!(breaker.state(), CircuitState::Open, "{case:?}");
            }
            After::OpenSince(ms) => {
                assert_eq!(breaker.state(), CircuitState::Open, "{case:?}");
                let reopens = start + Duration::from_millis(ms) + OPEN_FOR;
                tokio::time::sleep_until(reopens - Duration::from_millis(1)).await;
                assert!(breaker.acquire(clock()).is_err(), "{case:?}");
                tokio::time::sleep_until(reopens).await;
                let trial = breaker.acquire(clock()).expect("open_for has passed");
                assert!(trial.is_trial());
            }
        }
    });
}

/// One test per case, each with its own budget and breaker.
macro_rules! cases {
    ($($name:ident: $case:expr;)*) => {$(
        #[test]
        fn $name() {
            static BUDGET: RetryBudget = RetryBudget::new(10, 1.0);
            static BREAKER: CircuitBreaker = CircuitBreaker::new(FAILURES, 1, OPEN_FOR);
            #[retry(
                constant("1s"),
                jitter = "none",
                attempts = 3,
                budget = BUDGET,
                circuit = BREAKER
            )]
            async fn call(runs: Arc<AtomicU32>, panic_on: u32) -> Result<u32, Failure> {
                attempt(&runs, panic_on).await
            }
            run($case, &BUDGET, &BREAKER, call);
        }
    )*};
}

const CLOSED: Case = Case {
    open_first: false,
    panic_on: 0,
    drop_at_ms: None,
    outcome: Outcome::Dropped,
    tokens: 10_000,
    after: After::Closed(0),
};

const TRIAL: Case = Case {
    open_first: true,
    ..CLOSED
};

const fn drop_at(case: Case, ms: u64, tokens: u64, after: After) -> Case {
    Case {
        drop_at_ms: Some(ms),
        outcome: Outcome::Dropped,
        tokens,
        after,
        ..case
    }
}

// A call dropped mid-attempt (a caller's own timeout) counts that attempt
// as a failure; one dropped mid-sleep had its attempt reported already.
cases! {
    dropped_when_first_polled: drop_at(CLOSED, 0, 10_000, After::Closed(1));
    dropped_mid_attempt_1: drop_at(CLOSED, 250, 10_000, After::Closed(1));
    dropped_mid_sleep_1: drop_at(CLOSED, 750, 9_000, After::Closed(1));
    dropped_mid_attempt_2: drop_at(CLOSED, 1750, 9_000, After::Closed(2));
    dropped_mid_sleep_2: drop_at(CLOSED, 2500, 8_000, After::Closed(2));
    // The third failure, cancelled: the breaker opens when it is dropped.
    dropped_mid_attempt_3: drop_at(CLOSED, 3250, 8_000, After::OpenSince(3250));
    not_dropped: Case {
        outcome: Outcome::Returned(Failure::Transient),
        tokens: 8_000,
        after: After::OpenSince(3500),
        ..CLOSED
    };
    // A trial cancelled (it hung) reopens the breaker, timed from then.
    dropped_mid_trial: drop_at(TRIAL, 250, 10_000, After::OpenSince(250));
    // The trial fails at 500 and reopens the breaker: a retry would only
    // fail fast, so the call ends there with its error, spending no token,
    // before a drop at 750 could happen.
    the_failed_trial_ends_the_call_before_a_drop: Case {
        drop_at_ms: Some(750),
        outcome: Outcome::Returned(Failure::Transient),
        tokens: 10_000,
        after: After::OpenSince(500),
        ..TRIAL
    };
    trial_not_dropped: Case {
        outcome: Outcome::Returned(Failure::Transient),
        tokens: 10_000,
        after: After::OpenSince(500),
        ..TRIAL
    };
    // A panicking attempt is a failed attempt too.
    panicking_attempt_1: Case {
        panic_on: 1,
        outcome: Outcome::Panicked,
        after: After::Closed(1),
        ..CLOSED
    };
    panicking_attempt_2: Case {
        panic_on: 2,
        outcome: Outcome::Panicked,
        tokens: 9_000,
        after: After::Closed(2),
        ..CLOSED
    };
    panicking_trial: Case {
        panic_on: 1,
        outcome: Outcome::Panicked,
        after: After::OpenSince(500),
        ..TRIAL
    };
}

#[test]
fn panicking_trial_of_a_plain_fn() {
    static BUDGET: RetryBudget = RetryBudget::new(10, 1.0);
    static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::ZERO);
    #[retry(immediate, attempts = 1, circuit = BREAKER)]
    fn open_it() -> Result<u32, Failure> {
        Err(Failure::Transient)
    }
    #[retry(immediate, attempts = 3, budget = BUDGET, circuit = BREAKER)]
    fn call() -> Result<u32, Failure> {
        panic!("the body panics");
    }

    assert_eq!(open_it(), Err(Failure::Transient));
    assert_eq!(BREAKER.state(), CircuitState::Open);
    // open_for is zero: the next call is the trial, and it panics: a
    // failed trial, which reopens the breaker.
    assert!(catch_unwind(call).is_err());
    assert_eq!(BREAKER.state(), CircuitState::Open);
    assert!(!Word::of(&BREAKER).trial, "no trial in flight");
    assert_eq!(milli(&BUDGET), 10_000, "a panic is not retried");
    let trial = BREAKER
        .acquire(Instant::now())
        .expect("the trial slot is free");
    assert!(trial.is_trial());
}
