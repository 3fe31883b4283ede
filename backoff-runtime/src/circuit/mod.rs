//! [`CircuitBreaker`]: stop calling a service that keeps failing, and probe
//! it now and then to see whether it is back.
//!
//! ```text
//!            failure_threshold consecutive failures
//!   Closed ──────────────────────────────────────────▶ Open
//!     ▲                                                 │ open_for elapsed:
//!     │ success_threshold successes                     │ one trial call
//!     │                                                 ▼
//!     └───────────────────────────────────────────── HalfOpen
//!                      a failed trial ─────────────▶ Open (again)
//! ```
//!
//! While open (and while a half-open trial is in flight), calls fail fast
//! without running: `#[retry(circuit = BREAKER)]` returns
//! `E::from(CircuitOpen)`. What opens it is either a count of consecutive
//! failures ([`CircuitBreaker::new`]) or a failure ratio over a sliding
//! window ([`CircuitBreaker::rate`]).
//!
//! A call that is cancelled (a `timeout` or `attempt_timeout` that fires, a
//! caller's own `tokio::time::timeout`, a dropped future) or that panics
//! counts as a failure: its [`Permit`] is dropped without a verdict.
//!
//! The whole state is one `AtomicU64` updated by compare-and-swap (a rate
//! breaker adds ten atomic buckets): no lock, `Sync`, and `const fn`
//! constructors so it lives in a `static`. Time is kept in milliseconds
//! since the first time the breaker was used, read from the clock of the
//! call (so it follows tokio's paused time in tests). The atomics are
//! model-checked with loom (`src/loom.rs`).

use core::mem::ManuallyDrop;
use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant;

use crate::clock::Clock;
use crate::sync::{AtomicU64, Ordering};

/// The state of a [`CircuitBreaker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CircuitState {
    /// Calls run; consecutive failures are counted.
    Closed,
    /// Calls fail fast until `open_for` has passed.
    Open,
    /// One trial call at a time runs; successes are counted.
    HalfOpen,
}

/// The error of a call refused by an open [`CircuitBreaker`]; the attribute
/// turns it into the function's error with `E::from(CircuitOpen)`.
///
/// It says when the breaker lets a trial call through, if it knows
/// ([`retry_in`](CircuitOpen::retry_in)), so a server can answer
/// `503 Service Unavailable` with a `Retry-After`.
///
/// ```
/// use backoff_runtime::{CircuitBreaker, CircuitOpen};
/// use std::time::{Duration, Instant};
///
/// #[derive(Debug)]
/// enum Error { Unavailable { retry_in: Option<Duration> }, Io(std::io::Error) }
///
/// impl From<CircuitOpen> for Error {
///     fn from(open: CircuitOpen) -> Self { Error::Unavailable { retry_in: open.retry_in() } }
/// }
///
/// let breaker = CircuitBreaker::new(1, 1, Duration::from_secs(30));
/// let t = Instant::now();
/// breaker.acquire(t).unwrap().failure(t); // opens it for 30 s
/// let open = breaker.acquire(t + Duration::from_secs(10)).unwrap_err();
/// assert_eq!(open.retry_in(), Some(Duration::from_secs(20)));
/// assert!(matches!(Error::from(open), Error::Unavailable { retry_in: Some(_) }));
/// assert_eq!(open.to_string(), "circuit breaker is open");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CircuitOpen {
    retry_in: Option<Duration>,
}

impl CircuitOpen {
    /// A refusal after which the breaker lets a trial call through in
    /// `wait`.
    ///
    /// ```
    /// use backoff_runtime::CircuitOpen;
    /// use std::time::Duration;
    ///
    /// let open = CircuitOpen::after(Duration::from_secs(3));
    /// assert_eq!(open.retry_in(), Some(Duration::from_secs(3)));
    /// ```
    pub const fn after(wait: Duration) -> Self {
        CircuitOpen {
            retry_in: Some(wait),
        }
    }

    /// How long until the breaker lets a trial call through, as it stood
    /// when it refused (to the millisecond, rounded up): `Some` while it is
    /// open, `None` when it cannot say (half-open with its trial running,
    /// whose verdict decides; held open by its fleet, whose trial runs in
    /// whichever process claims it; an `open_for` too long to count).
    pub const fn retry_in(&self) -> Option<Duration> {
        self.retry_in
    }
}

crate::control_error! {
    /// So `io::Result` functions can use `circuit` directly: a refused call is
    /// an error of kind [`ConnectionRefused`](std::io::ErrorKind::ConnectionRefused)
    /// whose source is the [`CircuitOpen`].
    ///
    /// ```
    /// use backoff_runtime::CircuitOpen;
    ///
    /// let e = std::io::Error::from(CircuitOpen::default());
    /// assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
    /// assert!(e.get_ref().unwrap().is::<CircuitOpen>());
    /// ```
    CircuitOpen: "circuit breaker is open", ConnectionRefused
}

mod packed;
mod permit;
mod remote;
mod window;

pub(crate) use packed::Epoch;
use packed::*;
pub use permit::Permit;
pub(crate) use remote::Gate;
use remote::*;
pub use remote::{Remote, RemoteView, Report, TrialWanted};
pub(crate) use window::Buckets;
use window::*;

/// A lock-free circuit breaker shared by every call that names it.
///
/// Two kinds share one type (so `#[retry(circuit = ...)]` takes either) and
/// the same open and half-open rules; they differ in what opens them:
///
/// - [`CircuitBreaker::new`]: `failure_threshold` consecutive failures;
/// - [`CircuitBreaker::rate`]: a failure ratio over a sliding time window,
///   once the window holds enough calls.
///
/// # What counts
///
/// Each call reports to its [`Permit`]: [`success`](Permit::success),
/// [`failure`](Permit::failure), or [`release`](Permit::release) (the call
/// was not made). **A permit dropped without a verdict is a failure**, timed
/// by the permit's clock: an attempt cancelled by `attempt_timeout`, by a
/// whole-call `timeout`, by the caller's own `tokio::time::timeout` or
/// `select!`, or one that panicked, counts against the breaker, so a hung
/// dependency opens it (the case breakers exist for).
///
/// A permit reports only to the state that admitted it: after the breaker
/// has opened, tried and closed again, the late verdicts of calls admitted
/// before are ignored (as `sony/gobreaker` drops reports of earlier
/// generations), so slow calls of an old outage cannot reopen a breaker
/// that a successful trial has just closed.
///
/// # Half-open
///
/// After `open_for`, one caller gets a trial permit; the others fail fast
/// until its verdict. A trial's claim lapses after `open_for` (at least
/// 1 ms): a trial that hangs, or whose permit was leaked with
/// [`mem::forget`](core::mem::forget), then gives way to a new trial, and
/// its own late verdict is ignored.
///
/// # Limits
///
/// - Thresholds above 16,383 (2¹⁴ − 1) act as 16,383; a zero threshold
///   acts as 1.
/// - Time is kept in milliseconds from the breaker's first use, on a ring of
///   2³⁹ ms; an `open_for` of 2³⁸ ms (8.7 years) or more never ends. Times
///   are rounded so a trial never comes early: it comes after `open_for`
///   (rounded up to a millisecond) and at most 2 ms later.
/// - Generations are counted modulo 256: a permit that outlives 256
///   changes of state may report to the wrong one (as before this rule).
/// - A permit from [`acquire`](CircuitBreaker::acquire) reads the time of
///   a dropped permit (and a rate breaker's successes) from
///   the async loops' clock: tokio's clock inside a
///   runtime with the `tokio` feature (paused time included), else
///   [`Instant::now`].
///
/// # Examples
///
/// ```
/// use backoff_runtime::{CircuitBreaker, CircuitState};
/// use std::time::{Duration, Instant};
///
/// static BREAKER: CircuitBreaker = CircuitBreaker::new(2, 1, Duration::from_secs(30));
///
/// let now = Instant::now();
/// BREAKER.acquire(now).unwrap().failure(now);
/// BREAKER.acquire(now).unwrap().failure(now);
/// assert_eq!(BREAKER.state(), CircuitState::Open);
/// assert!(BREAKER.acquire(now).is_err()); // fails fast
///
/// let later = now + Duration::from_secs(30);
/// let trial = BREAKER.acquire(later).unwrap(); // half-open: one trial
/// assert!(BREAKER.acquire(later).is_err()); // others still wait
/// trial.success();
/// assert_eq!(BREAKER.state(), CircuitState::Closed);
/// ```
#[derive(Debug)]
pub struct CircuitBreaker {
    word: AtomicU64,
    /// The first instant this breaker saw; it keeps time in milliseconds
    /// from there (each breaker its own, so breakers on different clocks,
    /// such as tokio's paused one, do not disturb each other).
    epoch: Epoch,
    trip: Trip,
    success_threshold: u64,
    /// `open_for` in ms, rounded up ([`NEVER`] if it never ends).
    open_for_ms: u64,
    /// Its name, for the `backoff.breaker.state` gauge.
    name: Option<&'static str>,
    /// Set by [`RemoteView::attach`]: consulted only
    /// when the breaker is open or half-open, and on failures.
    gate: OnceLock<Gate>,
}

/// The public name of a packed state.
fn state_of(state: u64) -> CircuitState {
    match state {
        CLOSED => CircuitState::Closed,
        OPEN => CircuitState::Open,
        _ => CircuitState::HalfOpen,
    }
}

/// `n`, or 1 for 0, at most [`COUNT_MAX`].
const fn threshold(n: u32) -> u64 {
    let n = n as u64;
    if n == 0 {
        1
    } else if n > COUNT_MAX {
        COUNT_MAX
    } else {
        n
    }
}

impl CircuitBreaker {
    /// A closed breaker that opens after `failure_threshold` consecutive
    /// failures, stays open for `open_for`, then lets one trial call through
    /// at a time and closes after `success_threshold` successful trials.
    pub const fn new(failure_threshold: u32, success_threshold: u32, open_for: Duration) -> Self {
        CircuitBreaker {
            word: AtomicU64::new(0),
            epoch: Epoch::new(),
            trip: Trip::Consecutive(threshold(failure_threshold)),
            success_threshold: threshold(success_threshold),
            open_for_ms: millis_up(open_for),
            name: None,
            gate: OnceLock::new(),
        }
    }

    /// A closed breaker that opens when, over the last `window`, at least
    /// `min_calls` calls were made and at least `failure_ratio` of them
    /// failed (resilience4j's and Polly's failure-rate breaker); then, like
    /// [`new`](CircuitBreaker::new) with a `success_threshold` of 1, it
    /// stays open for `open_for` and closes after one successful trial. The
    /// window starts empty again each time it closes.
    ///
    /// ```
    /// use backoff_runtime::{CircuitBreaker, CircuitState};
    /// use std::time::{Duration, Instant};
    ///
    /// // Open when half of at least 4 calls in the last 10 s failed.
    /// static BREAKER: CircuitBreaker =
    ///     CircuitBreaker::rate(0.5, 4, Duration::from_secs(10), Duration::from_secs(30));
    ///
    /// // (A rate breaker times successes too: with the permit's clock.)
    /// let clock = backoff_runtime::clock::system;
    /// BREAKER.acquire_on(clock).unwrap().success();
    /// BREAKER.acquire_on(clock).unwrap().failure(Instant::now());
    /// BREAKER.acquire_on(clock).unwrap().success();
    /// assert_eq!(BREAKER.state(), CircuitState::Closed); // 3 calls: too few
    /// BREAKER.acquire_on(clock).unwrap().failure(Instant::now());
    /// assert_eq!(BREAKER.state(), CircuitState::Open); // 2 of 4 failed
    /// ```
    ///
    /// # The window, lock-free
    ///
    /// The window is ten buckets of `window / 10` (at least 1 ms), each one
    /// `AtomicU64` holding its time index, the breaker's generation and two
    /// 16-bit counts: a report is one compare-and-swap on its bucket (an
    /// outdated bucket is recycled in the same swap) and ten loads to sum
    /// the window; opening is one compare-and-swap on the state word. No
    /// lock, no allocation, `const`, so it lives in a `static`.
    ///
    /// # Limits
    ///
    /// - The window slides in tenths: a call counts for between 0.9 and 1
    ///   times `window` after it.
    /// - Each bucket counts at most 65,535 calls; further calls in the
    ///   same tenth of the window are not counted.
    /// - `failure_ratio` has a resolution of 0.001; above 1 it acts as 1,
    ///   below 0.001 (NaN included) as 0.001 (one failure among
    ///   `min_calls` calls opens it). A zero `min_calls` acts as 1.
    /// - The sum of the buckets is not one atomic snapshot: a report racing
    ///   with others may see the window a few calls out of date (the next
    ///   report sees them), and reports racing across the window's edge
    ///   may count in the older or the newer tenth.
    /// - Unlike the count breaker, every success through a closed rate
    ///   breaker reads the permit's clock and writes its bucket.
    pub const fn rate(
        failure_ratio: f64,
        min_calls: u32,
        window: Duration,
        open_for: Duration,
    ) -> Self {
        let per_mille = if failure_ratio.is_nan() || failure_ratio < 0.001 {
            1
        } else if failure_ratio >= 1.0 {
            1000
        } else {
            (failure_ratio * 1000.0 + 0.5) as u64
        };
        CircuitBreaker {
            word: AtomicU64::new(RATE_MARK << COUNT_SHIFT),
            epoch: Epoch::new(),
            trip: Trip::Rate(Window {
                per_mille,
                min_calls: if min_calls == 0 { 1 } else { min_calls as u64 },
                buckets: Buckets::new(window),
            }),
            success_threshold: 1,
            open_for_ms: millis_up(open_for),
            name: None,
            gate: OnceLock::new(),
        }
    }

    /// Names this breaker: the installed recorder is told each change of
    /// its state
    /// (`record::Recorder::breaker_state`, with the feature `record`;
    /// `backoff-opentelemetry` records it in the gauge
    /// `backoff.breaker.state`, 0 closed, 1 half-open, 2 open, with the
    /// attribute `breaker` = `name`). An unnamed breaker records nothing.
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// static PAYMENTS: CircuitBreaker =
    ///     CircuitBreaker::new(5, 1, Duration::from_secs(30)).named("payments");
    /// assert!(PAYMENTS.acquire(std::time::Instant::now()).is_ok());
    /// ```
    pub const fn named(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self
    }

    /// Tells the recorder of a change from the word `before` to the state
    /// `after`, if one is installed, this breaker is named and the state
    /// changed (while none is installed: one atomic load).
    #[inline(always)]
    fn record_state(&self, before: u64, after: u64) {
        if crate::record::on() {
            self.record_state_changed(before, after);
        }
    }

    /// [`record_state`](Self::record_state), a recorder installed.
    #[cold]
    #[inline(never)]
    fn record_state_changed(&self, before: u64, after: u64) {
        if let Some(name) = self.name
            && Packed::load(before).state != after
        {
            crate::record::breaker_state(name, state_of(after));
        }
    }

    /// The current state (an open breaker whose `open_for` has passed
    /// reports `Open` until a call asks for a trial).
    pub fn state(&self) -> CircuitState {
        state_of(Packed::load(self.word.load(Ordering::Acquire)).state)
    }

    /// Asks to make a call at `now`: a [`Permit`] to report the outcome to,
    /// or [`CircuitOpen`] to fail fast.
    ///
    /// A permit dropped without a verdict (the call was cancelled or
    /// panicked) counts as a failure, timed by
    /// tokio's clock with the `tokio` feature, else the system clock.
    #[inline]
    pub fn acquire(&self, now: Instant) -> Result<Permit<'_>, CircuitOpen> {
        self.acquire_timed(|| now, crate::clock::for_async())
    }

    /// [`acquire`](CircuitBreaker::acquire) with the time read from `clock`,
    /// which is called only when the breaker is not closed (a call through a
    /// closed breaker reads no clock and writes nothing shared: one atomic
    /// load), and whose permit keeps
    /// `clock` too: a permit dropped without a verdict counts as a failure
    /// at `clock()` (and a rate breaker times its successes with it). The
    /// loops of this crate acquire with their own clock this way.
    ///
    /// ```
    /// use backoff_runtime::{CircuitBreaker, CircuitState};
    /// use std::time::Duration;
    ///
    /// static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(30));
    ///
    /// let permit = BREAKER.acquire_on(backoff_runtime::clock::system).unwrap();
    /// drop(permit); // no verdict: the call was cancelled, a failure
    /// assert_eq!(BREAKER.state(), CircuitState::Open);
    /// ```
    #[inline]
    #[doc(hidden)]
    pub fn acquire_on(&self, clock: Clock) -> Result<Permit<'_>, CircuitOpen> {
        self.acquire_timed(clock, clock)
    }

    /// `acquire_on` with the time read from `now` (called only when the
    /// breaker is not closed), timing the permit by `clock`.
    #[inline]
    fn acquire_timed(
        &self,
        now: impl FnOnce() -> Instant,
        clock: Clock,
    ) -> Result<Permit<'_>, CircuitOpen> {
        let word = self.word.load(Ordering::Acquire);
        if word >> STATE_SHIFT == CLOSED {
            // (The state may change right after this load; the call is then
            // ordered before that change, as if the load were a no-op CAS,
            // and belongs to the generation it saw.)
            return Ok(self.permit(clock, (word >> GEN_SHIFT) & GEN_MASK, false));
        }
        self.acquire_not_closed(now(), clock)
    }

    /// [`acquire`](CircuitBreaker::acquire) once the breaker was seen open or
    /// half-open (it may have closed since).
    #[cold]
    #[inline(never)]
    fn acquire_not_closed(&self, now: Instant, clock: Clock) -> Result<Permit<'_>, CircuitOpen> {
        let (floor, ceil) = self.epoch.millis(now);
        // Held open by its fleet: a trial only with the fleet's grant, taken
        // here (and given back if no trial is claimed with it).
        let flags = self
            .gate
            .get()
            .map_or(0, |g| g.flags.fetch_and(!GRANT, Ordering::AcqRel));
        let (held, grant) = (flags & HELD != 0, flags & GRANT != 0);
        let mut granted = Packed::load(0);
        let result = self
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let s = Packed::load(word);
                granted = match s.state {
                    CLOSED => s,
                    OPEN if held && grant => s.entered(HALF_OPEN, 0, ceil),
                    OPEN if !held && self.lapsed(floor, s) => s.entered(HALF_OPEN, 0, ceil),
                    HALF_OPEN if (!held || grant) && (!s.trial || self.lapsed(floor, s)) => {
                        s.entered(HALF_OPEN, s.count, ceil)
                    }
                    _ => return None,
                };
                Some(granted.store())
            });
        if let Some(gate) = self.gate.get() {
            gate.after_acquire(held, grant, result.is_ok() && granted.trial);
        }
        if let Ok(before) = result {
            self.record_state(before, granted.state);
        }
        match result {
            Ok(_) => Ok(self.permit(clock, granted.generation, granted.trial)),
            Err(word) => Err(self.refusal(Packed::load(word), floor, held)),
        }
    }

    /// The refusal of a call at `now` (ms) by a breaker in state `s`: when
    /// it lets a trial through, if it knows.
    fn refusal(&self, s: Packed, now: u64, held: bool) -> CircuitOpen {
        if held || self.open_for_ms == NEVER || s.state != OPEN {
            return CircuitOpen::default();
        }
        let left = self.open_for_ms.saturating_sub(since(now, s.at));
        CircuitOpen::after(Duration::from_millis(left))
    }

    /// Whether `open_for` has passed from `s.at` (rounded up) to `now`
    /// (rounded down): for an open breaker, the wait before a trial; for a
    /// half-open one, the trial's claim (at least 1 ms).
    #[inline]
    fn lapsed(&self, now: u64, s: Packed) -> bool {
        let least = u64::from(s.state == HALF_OPEN);
        self.open_for_ms != NEVER && since(now, s.at) >= self.open_for_ms.max(least)
    }

    /// Whether a call at `at` would be let through (closed, or open long
    /// enough for a trial, or half-open with the trial slot free or its
    /// claim lapsed by then). A retry that would only fail fast gives up at
    /// once instead.
    pub(crate) fn admits_at(&self, at: Instant) -> bool {
        let s = Packed::load(self.word.load(Ordering::Acquire));
        s.state == CLOSED
            || (s.state == HALF_OPEN && !s.trial)
            || self.lapsed(self.epoch.millis(at).0, s)
    }

    fn update(&self, f: impl Fn(Packed) -> Option<Packed>) {
        let result = self
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                f(Packed::load(word)).map(Packed::store)
            });
        if crate::record::on()
            && let Ok(before) = result
            && let Some(after) = f(Packed::load(before))
        {
            self.record_state_changed(before, after.state);
        }
    }

    /// A success: closes a half-open breaker (after enough trials) and
    /// resets a closed one's failure count; a closed count breaker with no
    /// failures counted is left alone (one atomic load, no write).
    #[inline]
    fn on_success(&self, permit: &Permit<'_>) {
        // (A closed rate breaker is never clean: see `RATE_MARK`.)
        if !permit.trial && self.word.load(Ordering::Acquire) & CLEAN_MASK == 0 {
            return;
        }
        self.on_success_slow(permit);
    }

    #[cold]
    #[inline(never)]
    fn on_success_slow(&self, permit: &Permit<'_>) {
        let generation = u64::from(permit.generation);
        if !permit.trial
            && let Trip::Rate(window) = &self.trip
        {
            // A success too can open it: the one that brings the window to
            // `min_calls` with the ratio already reached (as resilience4j
            // checks the rate after every call).
            let now = (permit.clock)();
            self.record_closed(window, generation, now, false);
            return;
        }
        let trial = permit.trial;
        // Whether the update that took effect ended a run (a late success,
        // from an older generation, ends none).
        let ended = core::cell::Cell::new(false);
        self.update(|s| {
            ended.set(false);
            match (s.state, trial) {
                _ if s.generation != generation => None,
                (CLOSED, false) if s.count > 0 => {
                    ended.set(true);
                    Some(Packed { count: 0, ..s })
                }
                (HALF_OPEN, true) if s.trial && s.count + 1 >= self.success_threshold => {
                    Some(s.entered(CLOSED, self.clean_count(), 0))
                }
                (HALF_OPEN, true) if s.trial => Some(Packed {
                    count: s.count + 1,
                    trial: false,
                    ..s
                }),
                _ => None,
            }
        });
        if let Some(gate) = self.gate.get() {
            // A success after failures: the fleet's count starts again.
            // (Counted after the reset, so the fleet's thread never reads
            // the count from before it with the new total.)
            if ended.get() {
                gate.flags.fetch_add(1 << RUN_ENDS_SHIFT, Ordering::AcqRel);
            }
            gate.wake.wake();
        }
    }

    fn on_failure(&self, permit: &Permit<'_>, now: Instant) {
        let generation = u64::from(permit.generation);
        let ceil = self.epoch.millis(now).1;
        match (&self.trip, permit.trial) {
            (Trip::Consecutive(threshold), false) => self.update(|s| match s.state {
                _ if s.generation != generation => None,
                CLOSED if s.count + 1 >= *threshold => Some(s.entered(OPEN, 0, ceil)),
                // (Closed, a word's trial and time are clear.)
                CLOSED => Some(Packed {
                    count: s.count + 1,
                    ..s
                }),
                _ => None,
            }),
            (Trip::Rate(window), false) => self.record_closed(window, generation, now, true),
            (_, true) => self.update(|s| {
                (s.state == HALF_OPEN && s.trial && s.generation == generation)
                    .then(|| s.entered(OPEN, 0, ceil))
            }),
        }
        if let Some(gate) = self.gate.get() {
            gate.failures.fetch_add(1, Ordering::AcqRel);
            gate.wake.wake();
        }
    }

    /// `open_for`, in milliseconds (at least 1, at most about 35 years):
    /// how long a fleet's trial is held before another process may claim
    /// it.
    #[doc(hidden)]
    pub fn open_for_ms(&self) -> u64 {
        self.open_for_ms.clamp(1, TIME_HALF)
    }

    /// Loads every atomic once: a loom model calls this before it spawns,
    /// so the lazily created loom atomics exist before any thread races.
    #[cfg(all(test, loom))]
    pub(crate) fn touch(&self) {
        self.word.load(Ordering::Acquire);
        if let Trip::Rate(window) = &self.trip {
            window.buckets.totals(0, 0);
        }
    }

    /// A rate breaker's report of a call admitted while closed in
    /// `generation`: counted in the window if that generation is still
    /// current, and the breaker opens if the window now trips it.
    fn record_closed(&self, window: &Window, generation: u64, now: Instant, failed: bool) {
        let word = self.word.load(Ordering::Acquire);
        let s = Packed::load(word);
        if s.state != CLOSED || s.generation != generation {
            return;
        }
        let (floor, ceil) = self.epoch.millis(now);
        if window.trips(generation, floor, failed) {
            // (If the word changed meanwhile, another report opened it or
            // the generation is over.)
            let opened = self.word.compare_exchange(
                word,
                s.entered(OPEN, 0, ceil).store(),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            if opened.is_ok() {
                self.record_state(word, OPEN);
            }
        }
    }

    /// The count of a breaker closed afresh: 0, or a rate breaker's mark.
    fn clean_count(&self) -> u64 {
        match self.trip {
            Trip::Consecutive(_) => 0,
            Trip::Rate(_) => RATE_MARK,
        }
    }

    /// A permit of this breaker in `generation`, timed by `clock`.
    #[inline(always)]
    fn permit(&self, clock: Clock, generation: u64, trial: bool) -> Permit<'_> {
        Permit {
            breaker: self,
            clock,
            generation: generation as u8,
            trial,
        }
    }

    fn release(&self, permit: &Permit<'_>) {
        let generation = u64::from(permit.generation);
        self.update(|s| {
            (s.state == HALF_OPEN && s.trial && s.generation == generation)
                .then_some(Packed { trial: false, ..s })
        });
    }
}

#[cfg(test)]
mod tests;
