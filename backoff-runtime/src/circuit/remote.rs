use super::*;

/// What a breaker tells the remote [attached](RemoteView::attach) to it.
///
/// Implemented by closures `Fn()` too.
pub trait Remote: Send + Sync {
    /// Something the remote should push happened: a failure, a success
    /// that ended a run of failures or a trial, a call refused while held.
    /// Called from the caller's thread, so it must be quick and must not
    /// block (a channel's `try_send`, a `Notify`).
    fn wake(&self);
}

impl<F: Fn() + Send + Sync> Remote for F {
    fn wake(&self) {
        self();
    }
}

/// What a remote ([`RemoteView::attach`]) tells a local breaker, and hears from
/// it: whether the fleet holds it open (then a trial needs a grant),
/// whether this process was granted the fleet's trial, and whether a call
/// was refused while held (so the fleet's trial is wanted here).
#[derive(Debug)]
pub(crate) struct Gate {
    pub(super) flags: AtomicU64,
    /// Every failure reported here (a running total the fleet stores as
    /// it is: pushing it twice changes nothing).
    pub(super) failures: AtomicU64,
    /// Wakes the fleet's sync task (a failure, a refusal, a closed trial).
    pub(super) wake: Box<dyn Remote>,
}

pub(super) const HELD: u64 = 1;
pub(super) const GRANT: u64 = 2;
pub(super) const WANT: u64 = 4;
/// The flags' bits from here up count the successes here, not trials',
/// that ended a run of failures (a running total the fleet stores as it
/// is; in the same word as the marks, so a breaker is no larger for it).
pub(super) const RUN_ENDS_SHIFT: u32 = 8;

crate::remote_debug!();

impl Gate {
    /// After an acquire that saw the breaker open or half-open: a grant not
    /// used for a trial is given back, and a call refused while held marks
    /// the fleet's trial as wanted here.
    pub(super) fn after_acquire(&self, held: bool, grant: bool, trial: bool) {
        if grant && !trial {
            self.flags.fetch_or(GRANT, Ordering::AcqRel);
        }
        if held && !trial && self.flags.fetch_or(WANT, Ordering::AcqRel) & WANT == 0 {
            self.wake.wake();
        }
    }
}

/// What a breaker reports to its fleet
/// ([`RemoteView::report`]): the counts a fleet adds up across
/// its processes, and what opens it, so what opens its fleet (the same
/// rule over the counts every process reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// A count breaker's ([`CircuitBreaker::new`]).
    Count {
        /// Every failure reported to it since it joined its fleet (a
        /// running total: a fleet stores it as it is, so a push retried,
        /// lost or run late counts each failure once; with
        /// [`RemoteView::run_ends`], the fleet tells which of
        /// them a success here has ended).
        failures: u64,
        /// Its current run of consecutive failures (0 unless closed).
        run: u64,
        /// Its `failure_threshold` (at least 1): the run that opens it.
        threshold: u64,
    },
    /// A rate breaker's ([`CircuitBreaker::rate`]): the failures and calls
    /// in its window while closed; `min_calls` of each while it is open on
    /// its own; none while its fleet holds it open.
    Rate {
        /// Failed calls in the window.
        failures: u64,
        /// Calls in the window.
        calls: u64,
        /// Its `failure_ratio`, in thousandths: the share of failures
        /// that opens it ...
        per_mille: u64,
        /// ... once the window holds its `min_calls` (at least 1).
        min_calls: u64,
    },
}

/// The trial gate's marks, as [`RemoteView::take_want`] takes
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrialWanted {
    /// A call was refused while the fleet held the breaker open: the
    /// fleet's trial is wanted here (the mark is now cleared).
    pub wanted: bool,
    /// A grant ([`RemoteView::grant`]) is still waiting unused
    /// (it stays).
    pub grant_unused: bool,
}

/// A breaker as its remote sees it. Made by
/// [`attach`](RemoteView::attach) once per breaker, or by
/// [`of`](RemoteView::of) for a breaker attached before; before a breaker
/// has a remote, its view does nothing and reports nothing.
///
/// What a remote may do to a breaker: everything a fleet (crate
/// `backoff-redis`, or a coordinator of your own over etcd, a database, a
/// sidecar) reads from a local [`CircuitBreaker`] and does to it lives
/// here, and nowhere else.
///
/// A breaker consults its [`Remote`], once one is
/// [attached](RemoteView::attach): it tells it ([`Remote::wake`]) of each
/// failure, each success that ends a run of failures or a trial, and each
/// call refused while the remote holds it open. The remote, from its own
/// thread, works the breaker through a [`RemoteView`]:
///
/// - **export** its counts: [`RemoteView::report`] (a [`Report`]: every
///   failure so far and the current run for a count breaker, the window's
///   failures and calls for a rate breaker, with what opens it) and
///   [`RemoteView::run_ends`] (successes that ended a run here);
/// - **import** the fleet's state: [`RemoteView::hold`] (open now, in a new
///   generation, and no trial of its own until released),
///   [`RemoteView::release`] (closing it when the fleet closed, or leaving
///   it to its own rules) and [`RemoteView::release_at`] (its own trial
///   staggered);
/// - **the trial gate**: [`RemoteView::take_want`] (a [`TrialWanted`]: a
///   call was refused while held; a grant is still unused),
///   [`RemoteView::grant`] (this process holds the fleet's one trial: the
///   next call admitted by the breaker's own rules is it),
///   [`RemoteView::mark_want`].
///
/// None of it costs the success path anything: the remote is consulted
/// only on failures, trials and while the breaker is open.
///
/// ```
/// use backoff_runtime::CircuitBreaker;
/// use backoff_runtime::circuit::{Remote, RemoteView, Report};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::sync::Arc;
/// use std::time::{Duration, Instant};
///
/// /// Counts what it is told (a real remote would wake its sync thread).
/// struct Wakes(Arc<AtomicU32>);
/// impl Remote for Wakes {
///     fn wake(&self) {
///         self.0.fetch_add(1, Ordering::Relaxed);
///     }
/// }
///
/// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));
/// let wakes = Arc::new(AtomicU32::new(0));
/// let view = RemoteView::attach(&breaker, Box::new(Wakes(wakes.clone()))).expect("its first remote");
/// let now = Instant::now();
/// breaker.acquire(now).unwrap().failure(now);
/// assert_eq!(wakes.load(Ordering::Relaxed), 1);
/// assert_eq!(view.report(now), Report::Count { failures: 1, run: 1, threshold: 5 });
/// view.hold(now); // the fleet opened
/// assert!(breaker.acquire(now).is_err());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RemoteView<'a>(&'a CircuitBreaker);

impl<'a> RemoteView<'a> {
    /// The view of `breaker` (of a breaker with no remote: does nothing).
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use backoff_runtime::circuit::RemoteView;
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));
    /// RemoteView::of(&breaker).hold(Instant::now()); // no remote: nothing
    /// assert!(!RemoteView::of(&breaker).held());
    /// ```
    pub fn of(breaker: &'a CircuitBreaker) -> Self {
        RemoteView(breaker)
    }

    /// Gives `breaker` to `remote` (a fleet, or any coordinator outside
    /// this process's calls), once, and returns its view; `None`, and
    /// `remote` dropped, if it has a remote already. The breaker then tells
    /// `remote` of each failure, each success that ends a run of failures
    /// or a trial, and each call refused while held ([`Remote::wake`]).
    ///
    /// Until a breaker has a remote, its view does nothing (and reports
    /// nothing: [`report`](RemoteView::report) counts failures from the
    /// attach on). A breaker with a remote costs no more on the success
    /// path: the remote is consulted only on failures, on trials, and
    /// while it is open.
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use backoff_runtime::circuit::{RemoteView, Report};
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));
    /// let wakes = Arc::new(AtomicU32::new(0));
    /// let w = wakes.clone();
    /// let remote = RemoteView::attach(&breaker, Box::new(move || {
    ///     w.fetch_add(1, Ordering::Relaxed);
    /// }))
    /// .expect("its first remote");
    /// assert!(RemoteView::attach(&breaker, Box::new(|| {})).is_none(), "one remote");
    ///
    /// let now = Instant::now();
    /// breaker.acquire(now).unwrap().failure(now);
    /// assert_eq!(wakes.load(Ordering::Relaxed), 1);
    /// // Every failure so far, and the current run of consecutive ones.
    /// assert_eq!(remote.report(now), Report::Count { failures: 1, run: 1, threshold: 5 });
    /// ```
    pub fn attach(breaker: &'a CircuitBreaker, remote: Box<dyn Remote>) -> Option<Self> {
        breaker
            .gate
            .set(Gate {
                flags: AtomicU64::new(0),
                failures: AtomicU64::new(0),
                wake: remote,
            })
            .ok()
            .map(|()| RemoteView(breaker))
    }

    /// The fleet is open: hold this breaker open (from `now`, a new
    /// generation unless it is open already) until [`release`]; while
    /// held, `open_for` passing lets no trial through: a trial needs
    /// [`grant`]. Does nothing before [`attach`].
    ///
    /// ```
    /// use backoff_runtime::{CircuitBreaker, CircuitState};
    /// use backoff_runtime::circuit::RemoteView;
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_millis(10));
    /// let remote = RemoteView::attach(&breaker, Box::new(|| {})).expect("its first remote");
    /// let now = Instant::now();
    /// remote.hold(now);
    /// assert!(remote.held());
    /// assert_eq!(breaker.state(), CircuitState::Open);
    /// let later = now + Duration::from_secs(60);
    /// assert!(breaker.acquire(later).is_err(), "held: no trial of its own");
    /// // The refusal marks the fleet's trial as wanted here.
    /// assert!(remote.take_want().wanted);
    /// remote.grant();
    /// breaker.acquire(later).unwrap().success(); // the fleet's one trial
    /// remote.release(true);
    /// assert_eq!(breaker.state(), CircuitState::Closed);
    /// ```
    ///
    /// [`release`]: RemoteView::release
    /// [`grant`]: RemoteView::grant
    /// [`attach`]: RemoteView::attach
    pub fn hold(&self, now: Instant) {
        if self
            .flags()
            .is_none_or(|f| f.fetch_or(HELD, Ordering::AcqRel) & HELD != 0)
        {
            return;
        }
        let ceil = self.0.epoch.millis(now).1;
        self.0.update(|s| (s.state != OPEN).then(|| s.entered(OPEN, 0, ceil)));
    }

    /// Whether the fleet holds this breaker open
    /// ([`hold`](RemoteView::hold)).
    pub fn held(&self) -> bool {
        self.flags()
            .is_some_and(|f| f.load(Ordering::Acquire) & HELD != 0)
    }

    /// The fleet no longer holds it: with `close`, a breaker still open or
    /// half-open closes (the fleet's trial succeeded); without, it keeps
    /// its local state and rules (the fleet is unreachable). An unused
    /// grant and a wanted trial are dropped.
    pub fn release(&self, close: bool) {
        let Some(flags) = self.flags() else {
            return;
        };
        flags.fetch_and(!(HELD | GRANT | WANT), Ordering::AcqRel);
        if close {
            let count = self.0.clean_count();
            self.0
                .update(|s| (s.state != CLOSED).then(|| s.entered(CLOSED, count, 0)));
        }
    }

    /// [`release`](RemoteView::release)`(false)` (the fleet
    /// is unreachable), with this process's own trial staggered: a breaker
    /// still open counts its `open_for` from `at` (in a new generation). A
    /// fleet gives each process an `at` of its own, so processes that the
    /// fleet held open together do not all try the dependency at once.
    ///
    /// ```
    /// use backoff_runtime::{CircuitBreaker, CircuitState};
    /// use backoff_runtime::circuit::RemoteView;
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(1));
    /// let remote = RemoteView::attach(&breaker, Box::new(|| {})).expect("its first remote");
    /// let now = Instant::now();
    /// remote.hold(now);
    /// remote.release_at(now + Duration::from_millis(300));
    /// assert!(!remote.held());
    /// assert!(breaker.acquire(now + Duration::from_millis(1200)).is_err());
    /// assert!(breaker.acquire(now + Duration::from_millis(1302)).is_ok()); // its trial
    /// ```
    pub fn release_at(&self, at: Instant) {
        // Reopened while still held: a call between the two sees either
        // the hold or the new `open_for`, never the old one run out.
        let ceil = self.0.epoch.millis(at).1;
        self.0.update(|s| (s.state == OPEN).then(|| s.entered(OPEN, 0, ceil)));
        self.release(false);
    }

    /// This process holds the fleet's trial: the next call admitted by the
    /// breaker's own rules (open or half-open, no trial of its own in
    /// flight) may be it; a call that does not claim it gives it back. One
    /// grant lets one trial through, however often it was granted.
    pub fn grant(&self) {
        if let Some(flags) = self.flags() {
            flags.fetch_or(GRANT, Ordering::AcqRel);
        }
    }

    /// How many successes here, not trials, have ended a run of
    /// consecutive failures since the breaker joined its fleet: a running
    /// total, so a fleet can push it as it is (idempotently: a push
    /// retried, or run late, changes nothing twice, and a failed push
    /// loses nothing). A success from a call admitted before the breaker
    /// last opened ends nothing and is not counted.
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use backoff_runtime::circuit::RemoteView;
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));
    /// let remote = RemoteView::attach(&breaker, Box::new(|| {})).expect("its first remote");
    /// let now = Instant::now();
    /// breaker.acquire(now).unwrap().success(); // no run to end
    /// assert_eq!(remote.run_ends(), 0);
    /// breaker.acquire(now).unwrap().failure(now);
    /// breaker.acquire(now).unwrap().success();
    /// assert_eq!(remote.run_ends(), 1);
    /// ```
    pub fn run_ends(&self) -> u64 {
        self.flags()
            .map_or(0, |f| f.load(Ordering::Acquire) >> RUN_ENDS_SHIFT)
    }

    /// Takes (and clears) the mark left by a call refused while held (the
    /// fleet's trial is wanted here), and tells whether a grant is still
    /// unused.
    pub fn take_want(&self) -> TrialWanted {
        self.flags().map_or(TrialWanted::default(), |f| {
            let flags = f.fetch_and(!WANT, Ordering::AcqRel);
            TrialWanted {
                wanted: flags & WANT != 0,
                grant_unused: flags & GRANT != 0,
            }
        })
    }

    /// Marks the fleet's trial as wanted here again (a claim that must
    /// wait for an earlier one to lapse).
    pub fn mark_want(&self) {
        if let Some(flags) = self.flags() {
            flags.fetch_or(WANT, Ordering::AcqRel);
        }
    }

    /// What this process reports to its fleet at `now` (see
    /// [`Report`]): for a count breaker, every failure reported here
    /// since it joined and its current run of consecutive failures; for a
    /// rate breaker, the failures and calls in its window; and what opens
    /// it.
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use backoff_runtime::circuit::{RemoteView, Report};
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));
    /// let remote = RemoteView::attach(&breaker, Box::new(|| {})).expect("its first remote");
    /// let now = Instant::now();
    /// breaker.acquire(now).unwrap().failure(now);
    /// breaker.acquire(now).unwrap().failure(now);
    /// assert_eq!(remote.report(now), Report::Count { failures: 2, run: 2, threshold: 5 });
    /// breaker.acquire(now).unwrap().success(); // ends the run, not the total
    /// assert_eq!(remote.report(now), Report::Count { failures: 2, run: 0, threshold: 5 });
    /// assert_eq!(remote.run_ends(), 1);
    ///
    /// let rate = CircuitBreaker::rate(0.5, 20, Duration::from_secs(10), Duration::from_secs(30));
    /// assert_eq!(
    ///     RemoteView::of(&rate).report(now),
    ///     Report::Rate { failures: 0, calls: 0, per_mille: 500, min_calls: 20 }
    /// );
    /// ```
    pub fn report(&self, now: Instant) -> Report {
        let s = Packed::load(self.0.word.load(Ordering::Acquire));
        let window = match &self.0.trip {
            Trip::Consecutive(threshold) => {
                let failures = self.0.gate.get().map(|g| &g.failures);
                return Report::Count {
                    failures: failures.map_or(0, |f| f.load(Ordering::Acquire)),
                    run: if s.state == CLOSED { s.count } else { 0 },
                    threshold: *threshold,
                };
            }
            Trip::Rate(window) => window,
        };
        let (calls, failures) = if self.held() {
            (0, 0)
        } else if s.state == CLOSED {
            let index = self.0.epoch.millis(now).0 / window.buckets.width;
            window.buckets.totals(s.generation, index)
        } else {
            (window.min_calls, window.min_calls)
        };
        Report::Rate {
            failures,
            calls,
            per_mille: window.per_mille,
            min_calls: window.min_calls,
        }
    }

    /// The gate's flags, once the breaker has a remote.
    fn flags(&self) -> Option<&AtomicU64> {
        self.0.gate.get().map(|g| &g.flags)
    }
}
