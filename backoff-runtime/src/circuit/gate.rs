//! A breaker in a fleet: the gate a fleet holds it by, and the public
//! fleet hooks an integration (`backoff-redis`) drives it through.

use super::*;

/// What a fleet ([`CircuitBreaker::join_fleet`]) tells a local breaker, and hears from
/// it: whether the fleet holds it open (then a trial needs a grant),
/// whether this process was granted the fleet's trial, and whether a call
/// was refused while held (so the fleet's trial is wanted here).
pub(crate) struct Gate {
    pub(super) flags: AtomicU64,
    /// Every failure reported here (a running total the fleet stores as
    /// it is: pushing it twice changes nothing).
    pub(super) failures: AtomicU64,
    /// Wakes the fleet's sync task (a failure, a refusal, a closed trial).
    pub(super) wake: Box<dyn Fn() + Send + Sync>,
}

pub(super) const HELD: u64 = 1;
pub(super) const GRANT: u64 = 2;
pub(super) const WANT: u64 = 4;
/// A success ended a run of failures here (closed, count breaker).
pub(super) const SUCCEEDED: u64 = 8;
/// The flags' bits from here up count the successes here, not trials',
/// that ended a run of failures (a running total the fleet stores as it
/// is; in the same word as the marks, so a breaker is no larger for it).
pub(super) const RUN_ENDS_SHIFT: u32 = 8;

impl fmt::Debug for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gate")
            .field("flags", &self.flags.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Gate {
    /// After an acquire that saw the breaker open or half-open: a grant not
    /// used for a trial is given back, and a call refused while held marks
    /// the fleet's trial as wanted here.
    pub(super) fn after_acquire(&self, held: bool, grant: bool, trial: bool) {
        if grant && !trial {
            self.flags.fetch_or(GRANT, Ordering::AcqRel);
        }
        if held && !trial && self.flags.fetch_or(WANT, Ordering::AcqRel) & WANT == 0 {
            (self.wake)();
        }
    }
}

/// What a breaker reports to its fleet
/// ([`CircuitBreaker::fleet_report`]): the counts a fleet adds up across
/// its processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetReport {
    /// A count breaker's ([`CircuitBreaker::new`]).
    Count {
        /// Every failure reported to it since it joined its fleet (a
        /// running total: a fleet stores it as it is, so a push retried,
        /// lost or run late counts each failure once; with
        /// [`CircuitBreaker::fleet_run_ends`], the fleet tells which of
        /// them a success here has ended).
        failures: u64,
        /// Its current run of consecutive failures (0 unless closed).
        run: u64,
    },
    /// A rate breaker's ([`CircuitBreaker::rate`]): the failures and calls
    /// in its window while closed; `min_calls` of each while it is open on
    /// its own; none while its fleet holds it open.
    Rate {
        /// Failed calls in the window.
        failures: u64,
        /// Calls in the window.
        calls: u64,
    },
}

/// What opens a breaker, so what opens its fleet
/// ([`CircuitBreaker::fleet_trip`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetTrip {
    /// A count breaker: `threshold` consecutive failures.
    Count {
        /// Its `failure_threshold` (at least 1).
        threshold: u64,
    },
    /// A rate breaker: at least `min_calls` calls in the window, and a
    /// share of failures of at least `per_mille` thousandths.
    Rate {
        /// Its `failure_ratio`, in thousandths.
        per_mille: u64,
        /// Its `min_calls` (at least 1).
        min_calls: u64,
    },
}

/// The trial gate's marks, as [`CircuitBreaker::fleet_take_want`] takes
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrialWanted {
    /// A call was refused while the fleet held the breaker open: the
    /// fleet's trial is wanted here (the mark is now cleared).
    pub wanted: bool,
    /// A grant ([`CircuitBreaker::fleet_grant`]) is still waiting unused
    /// (it stays).
    pub grant_unused: bool,
}

impl CircuitBreaker {
    /// Gives this breaker to a fleet (or any coordinator outside this
    /// process's calls), once: afterwards the `fleet_*` hooks below act on
    /// it. `wake` is called from the caller's thread (so it must be quick
    /// and must not block: a channel's `try_send`, a `Notify`) on each
    /// failure, each success that ends a run of failures or a trial, and
    /// each call refused while the fleet holds it open. `false`, and
    /// `wake` dropped, if it already has a fleet.
    ///
    /// Until a breaker joins a fleet, the hooks do nothing (and report
    /// nothing: [`fleet_report`](CircuitBreaker::fleet_report) counts
    /// failures from the join on). A breaker that joined costs no more on
    /// the success path: the hooks are consulted only on failures, on
    /// trials, and while it is open.
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));
    /// let wakes = Arc::new(AtomicU32::new(0));
    /// let w = wakes.clone();
    /// assert!(breaker.join_fleet(Box::new(move || {
    ///     w.fetch_add(1, Ordering::Relaxed);
    /// })));
    /// assert!(!breaker.join_fleet(Box::new(|| {})), "one fleet");
    ///
    /// let now = Instant::now();
    /// breaker.acquire(now).unwrap().failure(now);
    /// assert_eq!(wakes.load(Ordering::Relaxed), 1);
    /// // Every failure so far, and the current run of consecutive ones.
    /// assert_eq!(
    ///     breaker.fleet_report(now),
    ///     backoff_runtime::circuit::FleetReport::Count { failures: 1, run: 1 }
    /// );
    /// ```
    pub fn join_fleet(&self, wake: Box<dyn Fn() + Send + Sync>) -> bool {
        self.gate
            .set(Gate {
                flags: AtomicU64::new(0),
                failures: AtomicU64::new(0),
                wake,
            })
            .is_ok()
    }

    /// The fleet is open: hold this breaker open (from `now`, a new
    /// generation unless it is open already) until [`fleet_release`]; while
    /// held, `open_for` passing lets no trial through: a trial needs
    /// [`fleet_grant`]. Does nothing before [`join_fleet`].
    ///
    /// ```
    /// use backoff_runtime::{CircuitBreaker, CircuitState};
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_millis(10));
    /// breaker.join_fleet(Box::new(|| {}));
    /// let now = Instant::now();
    /// breaker.fleet_hold(now);
    /// assert!(breaker.fleet_held());
    /// assert_eq!(breaker.state(), CircuitState::Open);
    /// let later = now + Duration::from_secs(60);
    /// assert!(breaker.acquire(later).is_err(), "held: no trial of its own");
    /// // The refusal marks the fleet's trial as wanted here.
    /// assert!(breaker.fleet_take_want().wanted);
    /// breaker.fleet_grant();
    /// breaker.acquire(later).unwrap().success(); // the fleet's one trial
    /// breaker.fleet_release(true);
    /// assert_eq!(breaker.state(), CircuitState::Closed);
    /// ```
    ///
    /// [`fleet_release`]: CircuitBreaker::fleet_release
    /// [`fleet_grant`]: CircuitBreaker::fleet_grant
    /// [`join_fleet`]: CircuitBreaker::join_fleet
    pub fn fleet_hold(&self, now: Instant) {
        let Some(gate) = self.gate.get() else { return };
        if gate.flags.fetch_or(HELD, Ordering::AcqRel) & HELD != 0 {
            return;
        }
        let ceil = self.millis(now).1;
        self.update(|s| (s.state != OPEN).then(|| s.open(ceil)));
    }

    /// Whether the fleet holds this breaker open
    /// ([`fleet_hold`](CircuitBreaker::fleet_hold)).
    pub fn fleet_held(&self) -> bool {
        self.gate
            .get()
            .is_some_and(|g| g.flags.load(Ordering::Acquire) & HELD != 0)
    }

    /// The fleet no longer holds it: with `close`, a breaker still open or
    /// half-open closes (the fleet's trial succeeded); without, it keeps
    /// its local state and rules (the fleet is unreachable). An unused
    /// grant and a wanted trial are dropped.
    pub fn fleet_release(&self, close: bool) {
        let Some(gate) = self.gate.get() else { return };
        gate.flags
            .fetch_and(!(HELD | GRANT | WANT), Ordering::AcqRel);
        if close {
            let mark = match self.trip {
                Trip::Consecutive(_) => 0,
                Trip::Rate(_) => RATE_MARK,
            };
            self.update(|s| (s.state != CLOSED).then(|| s.reclosed(mark)));
        }
    }

    /// [`fleet_release`](CircuitBreaker::fleet_release)`(false)` (the fleet
    /// is unreachable), with this process's own trial staggered: a breaker
    /// still open counts its `open_for` from `at` (in a new generation). A
    /// fleet gives each process an `at` of its own, so processes that the
    /// fleet held open together do not all try the dependency at once.
    ///
    /// ```
    /// use backoff_runtime::{CircuitBreaker, CircuitState};
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(1));
    /// breaker.join_fleet(Box::new(|| {}));
    /// let now = Instant::now();
    /// breaker.fleet_hold(now);
    /// breaker.fleet_release_at(now + Duration::from_millis(300));
    /// assert!(!breaker.fleet_held());
    /// assert!(breaker.acquire(now + Duration::from_millis(1200)).is_err());
    /// assert!(breaker.acquire(now + Duration::from_millis(1302)).is_ok()); // its trial
    /// ```
    pub fn fleet_release_at(&self, at: Instant) {
        self.fleet_release(false);
        let ceil = self.millis(at).1;
        self.update(|s| (s.state == OPEN).then(|| s.open(ceil)));
    }

    /// This process holds the fleet's trial: the next call admitted by the
    /// breaker's own rules (open or half-open, no trial of its own in
    /// flight) may be it; a call that does not claim it gives it back. One
    /// grant lets one trial through, however often it was granted.
    pub fn fleet_grant(&self) {
        if let Some(gate) = self.gate.get() {
            gate.flags.fetch_or(GRANT, Ordering::AcqRel);
        }
    }

    /// Takes (and clears) the mark left by a success, not a trial's, that
    /// ended a run of failures here (so the fleet's run of consecutive
    /// failures ends too, even if the report that would show it is lost).
    pub fn fleet_take_succeeded(&self) -> bool {
        self.gate
            .get()
            .is_some_and(|g| g.flags.fetch_and(!SUCCEEDED, Ordering::AcqRel) & SUCCEEDED != 0)
    }

    /// How many successes here, not trials, have ended a run of
    /// consecutive failures since the breaker joined its fleet: a running
    /// total, so a fleet can push it as it is (idempotently: a push
    /// retried, or run late, changes nothing twice) where a mark taken
    /// before the push ([`fleet_take_succeeded`]) is lost with a failed
    /// one. A success from a call admitted before the breaker last opened
    /// ends nothing and is not counted.
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));
    /// breaker.join_fleet(Box::new(|| {}));
    /// let now = Instant::now();
    /// breaker.acquire(now).unwrap().success(); // no run to end
    /// assert_eq!(breaker.fleet_run_ends(), 0);
    /// breaker.acquire(now).unwrap().failure(now);
    /// breaker.acquire(now).unwrap().success();
    /// assert_eq!(breaker.fleet_run_ends(), 1);
    /// ```
    ///
    /// [`fleet_take_succeeded`]: CircuitBreaker::fleet_take_succeeded
    pub fn fleet_run_ends(&self) -> u64 {
        self.gate
            .get()
            .map_or(0, |g| g.flags.load(Ordering::Acquire) >> RUN_ENDS_SHIFT)
    }

    /// Takes (and clears) the mark left by a call refused while held (the
    /// fleet's trial is wanted here), and tells whether a grant is still
    /// unused.
    pub fn fleet_take_want(&self) -> TrialWanted {
        self.gate.get().map_or(TrialWanted::default(), |g| {
            let flags = g.flags.fetch_and(!WANT, Ordering::AcqRel);
            TrialWanted {
                wanted: flags & WANT != 0,
                grant_unused: flags & GRANT != 0,
            }
        })
    }

    /// Marks the fleet's trial as wanted here again (a claim that must
    /// wait for an earlier one to lapse).
    pub fn fleet_mark_want(&self) {
        if let Some(gate) = self.gate.get() {
            gate.flags.fetch_or(WANT, Ordering::AcqRel);
        }
    }

    /// What this process reports to its fleet at `now` (see
    /// [`FleetReport`]): for a count breaker, every failure reported here
    /// since it joined and its current run of consecutive failures; for a
    /// rate breaker, the failures and calls in its window.
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use backoff_runtime::circuit::FleetReport;
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));
    /// breaker.join_fleet(Box::new(|| {}));
    /// let now = Instant::now();
    /// breaker.acquire(now).unwrap().failure(now);
    /// breaker.acquire(now).unwrap().failure(now);
    /// assert_eq!(breaker.fleet_report(now), FleetReport::Count { failures: 2, run: 2 });
    /// breaker.acquire(now).unwrap().success(); // ends the run, not the total
    /// assert_eq!(breaker.fleet_report(now), FleetReport::Count { failures: 2, run: 0 });
    /// assert!(breaker.fleet_take_succeeded());
    /// ```
    pub fn fleet_report(&self, now: Instant) -> FleetReport {
        let s = Packed::load(self.word.load(Ordering::Acquire));
        match (&self.trip, s.state) {
            (Trip::Consecutive(_), state) => FleetReport::Count {
                failures: self
                    .gate
                    .get()
                    .map_or(0, |g| g.failures.load(Ordering::Acquire)),
                run: if state == CLOSED { s.count } else { 0 },
            },
            _ if self.fleet_held() => FleetReport::Rate {
                failures: 0,
                calls: 0,
            },
            (Trip::Rate(window), CLOSED) => {
                let index = self.millis(now).0 / window.width;
                let (calls, failures) = window.totals(s.generation, index);
                FleetReport::Rate { failures, calls }
            }
            (Trip::Rate(window), _) => FleetReport::Rate {
                failures: window.min_calls,
                calls: window.min_calls,
            },
        }
    }

    /// What opens this breaker, so what opens its fleet: the same rule
    /// over the counts every process reports.
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use backoff_runtime::circuit::FleetTrip;
    /// use std::time::Duration;
    ///
    /// let count = CircuitBreaker::new(5, 1, Duration::from_secs(30));
    /// assert_eq!(count.fleet_trip(), FleetTrip::Count { threshold: 5 });
    /// let rate = CircuitBreaker::rate(0.5, 20, Duration::from_secs(10), Duration::from_secs(30));
    /// assert_eq!(rate.fleet_trip(), FleetTrip::Rate { per_mille: 500, min_calls: 20 });
    /// ```
    pub fn fleet_trip(&self) -> FleetTrip {
        match &self.trip {
            Trip::Consecutive(threshold) => FleetTrip::Count {
                threshold: *threshold,
            },
            Trip::Rate(window) => FleetTrip::Rate {
                per_mille: window.per_mille,
                min_calls: window.min_calls,
            },
        }
    }
}
