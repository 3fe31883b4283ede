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
//! `E::from(CircuitOpen)`.
//!
//! The whole state is one `AtomicU64` updated by compare-and-swap: no lock,
//! `Sync`, and a `const fn` constructor so it lives in a `static`. Time is
//! kept in milliseconds since the first time the breaker was used, read
//! from the clock of the call (so it follows tokio's paused time in tests).

use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant;

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
/// ```
/// use backoff_runtime::CircuitOpen;
///
/// #[derive(Debug)]
/// enum Error { Unavailable, Io(std::io::Error) }
///
/// impl From<CircuitOpen> for Error {
///     fn from(_: CircuitOpen) -> Self { Error::Unavailable }
/// }
/// assert!(matches!(Error::from(CircuitOpen), Error::Unavailable));
/// assert_eq!(CircuitOpen.to_string(), "circuit breaker is open");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CircuitOpen;

impl fmt::Display for CircuitOpen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("circuit breaker is open")
    }
}

impl std::error::Error for CircuitOpen {}

/// So `io::Result` functions can use `circuit` directly: a refused call is
/// an error of kind [`ConnectionRefused`](std::io::ErrorKind::ConnectionRefused)
/// whose source is the [`CircuitOpen`].
///
/// ```
/// use backoff_runtime::CircuitOpen;
///
/// let e = std::io::Error::from(CircuitOpen);
/// assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
/// assert!(e.get_ref().unwrap().is::<CircuitOpen>());
/// ```
impl From<CircuitOpen> for std::io::Error {
    fn from(e: CircuitOpen) -> Self {
        std::io::Error::new(std::io::ErrorKind::ConnectionRefused, e)
    }
}

// The packed state: | state: 2 | count: 22 | trial: 1 | opened_at ms: 39 |
const TIME_BITS: u32 = 39;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;
const TRIAL: u64 = 1 << TIME_BITS;
const COUNT_SHIFT: u32 = TIME_BITS + 1;
const COUNT_MAX: u64 = (1 << 22) - 1;
const STATE_SHIFT: u32 = 62;
const CLOSED: u64 = 0;
const OPEN: u64 = 1;
const HALF_OPEN: u64 = 2;
/// The word of a closed breaker with no failure counted (`Packed::closed(0)`).
const CLOSED_CLEAN: u64 = 0;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Packed {
    state: u64,
    count: u64,
    trial: bool,
    opened_at: u64,
}

impl Packed {
    #[inline]
    fn load(word: u64) -> Self {
        Packed {
            state: word >> STATE_SHIFT,
            count: (word >> COUNT_SHIFT) & COUNT_MAX,
            trial: word & TRIAL != 0,
            opened_at: word & TIME_MASK,
        }
    }

    #[inline]
    fn store(self) -> u64 {
        (self.state << STATE_SHIFT)
            | (self.count.min(COUNT_MAX) << COUNT_SHIFT)
            | if self.trial { TRIAL } else { 0 }
            | (self.opened_at & TIME_MASK)
    }

    const fn closed(count: u64) -> Self {
        Packed {
            state: CLOSED,
            count,
            trial: false,
            opened_at: 0,
        }
    }

    const fn open(at: u64) -> Self {
        Packed {
            state: OPEN,
            count: 0,
            trial: false,
            opened_at: at,
        }
    }
}

/// A lock-free circuit breaker shared by every call that names it.
///
/// # Limits
///
/// Thresholds above 4,194,303 (2²² − 1) act as 4,194,303; a zero threshold
/// acts as 1. Time has millisecond resolution over 2³⁹ ms (17.4 years) from
/// the breaker's first use; past that its clock saturates, and a breaker
/// that opens then stays open.
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
    epoch: OnceLock<Instant>,
    failure_threshold: u32,
    success_threshold: u32,
    open_for: Duration,
    /// Its name, for the `backoff.breaker.state` gauge.
    #[cfg(feature = "opentelemetry")]
    name: Option<&'static str>,
}

impl CircuitBreaker {
    /// A closed breaker that opens after `failure_threshold` consecutive
    /// failures, stays open for `open_for`, then lets one trial call through
    /// at a time and closes after `success_threshold` successful trials.
    pub const fn new(failure_threshold: u32, success_threshold: u32, open_for: Duration) -> Self {
        CircuitBreaker {
            word: AtomicU64::new(0),
            epoch: OnceLock::new(),
            failure_threshold: if failure_threshold == 0 {
                1
            } else {
                failure_threshold
            },
            success_threshold: if success_threshold == 0 {
                1
            } else {
                success_threshold
            },
            open_for,
            #[cfg(feature = "opentelemetry")]
            name: None,
        }
    }

    /// Names this breaker: with the feature `opentelemetry`, each change
    /// of its state is recorded in the gauge `backoff.breaker.state`
    /// (0 closed, 1 half-open, 2 open) with the attribute `breaker` =
    /// `name` (an unnamed breaker records nothing). Without the feature the
    /// name is ignored.
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// static PAYMENTS: CircuitBreaker =
    ///     CircuitBreaker::new(5, 1, Duration::from_secs(30)).named("payments");
    /// assert!(PAYMENTS.acquire_with(std::time::Instant::now).is_ok());
    /// ```
    pub const fn named(self, name: &'static str) -> Self {
        #[cfg(feature = "opentelemetry")]
        {
            let mut this = self;
            this.name = Some(name);
            this
        }
        #[cfg(not(feature = "opentelemetry"))]
        {
            let _ = name;
            self
        }
    }

    /// Its [name](CircuitBreaker::named), if it has one (feature
    /// `opentelemetry`).
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(30)).named("payments");
    /// assert_eq!(breaker.name(), Some("payments"));
    /// ```
    #[cfg(feature = "opentelemetry")]
    pub const fn name(&self) -> Option<&'static str> {
        self.name
    }

    /// Records a change from the word `before` to the state `after` in the
    /// gauge, if this breaker is named and the state changed.
    #[cfg(feature = "opentelemetry")]
    #[cold]
    fn record_state(&self, before: u64, after: u64) {
        if let Some(name) = self.name
            && Packed::load(before).state != after
        {
            let gauge = match after {
                CLOSED => 0,
                HALF_OPEN => 1,
                _ => 2,
            };
            crate::metrics::breaker_state(name, gauge);
        }
    }

    /// The current state (an open breaker whose `open_for` has passed
    /// reports `Open` until a call asks for a trial).
    pub fn state(&self) -> CircuitState {
        match Packed::load(self.word.load(Ordering::Acquire)).state {
            CLOSED => CircuitState::Closed,
            OPEN => CircuitState::Open,
            _ => CircuitState::HalfOpen,
        }
    }

    /// Asks to make a call at `now`: a [`Permit`] to report the outcome to,
    /// or [`CircuitOpen`] to fail fast.
    ///
    /// A permit dropped without a report (the call was cancelled or
    /// panicked) counts as nothing, and frees the half-open trial slot.
    ///
    /// [`acquire_with`](CircuitBreaker::acquire_with) reads the clock only
    /// when the breaker is not closed.
    #[inline]
    pub fn acquire(&self, now: Instant) -> Result<Permit<'_>, CircuitOpen> {
        self.acquire_with(|| now)
    }

    /// [`acquire`](CircuitBreaker::acquire) with the time read from `clock`,
    /// which is called only when the breaker is not closed: a call through a
    /// closed breaker reads no clock and writes nothing shared (one atomic
    /// load).
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::{Duration, Instant};
    ///
    /// static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(30));
    ///
    /// let permit = BREAKER.acquire_with(|| unreachable!("closed: no clock read")).unwrap();
    /// permit.failure(Instant::now()); // opens the breaker
    /// assert!(BREAKER.acquire_with(Instant::now).is_err()); // open: the clock is read
    /// ```
    #[inline]
    pub fn acquire_with(&self, clock: impl FnOnce() -> Instant) -> Result<Permit<'_>, CircuitOpen> {
        if Packed::load(self.word.load(Ordering::Acquire)).state == CLOSED {
            // (The state may change right after this load; the call is then
            // ordered before that change, as if the load were a no-op CAS.)
            return Ok(Permit {
                breaker: self,
                trial: false,
                reported: false,
            });
        }
        self.acquire_not_closed(clock())
    }

    /// [`acquire`](CircuitBreaker::acquire) once the breaker was seen open or
    /// half-open (it may have closed since).
    #[cold]
    #[inline(never)]
    fn acquire_not_closed(&self, now: Instant) -> Result<Permit<'_>, CircuitOpen> {
        let now = self.millis(now);
        let open_for = u64::try_from(self.open_for.as_millis()).unwrap_or(u64::MAX);
        let mut trial = false;
        let result = self
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let s = Packed::load(word);
                trial = false;
                match s.state {
                    CLOSED => Some(word),
                    OPEN if now.saturating_sub(s.opened_at) >= open_for => {
                        trial = true;
                        Some(
                            Packed {
                                state: HALF_OPEN,
                                count: 0,
                                trial: true,
                                opened_at: s.opened_at,
                            }
                            .store(),
                        )
                    }
                    HALF_OPEN if !s.trial => {
                        trial = true;
                        Some(Packed { trial: true, ..s }.store())
                    }
                    _ => None,
                }
            });
        #[cfg(feature = "opentelemetry")]
        if let Ok(before) = result
            && trial
        {
            self.record_state(before, HALF_OPEN);
        }
        match result {
            Ok(_) => Ok(Permit {
                breaker: self,
                trial,
                reported: false,
            }),
            Err(_) => Err(CircuitOpen),
        }
    }

    /// Milliseconds since this breaker's epoch (an earlier instant, from
    /// another clock, counts as the epoch).
    fn millis(&self, now: Instant) -> u64 {
        let epoch = *self.epoch.get_or_init(|| now);
        let ms = now.saturating_duration_since(epoch).as_millis();
        u64::try_from(ms).unwrap_or(u64::MAX).min(TIME_MASK)
    }

    /// Whether a call at `at` would be let through (closed, or open long
    /// enough for a trial, or half-open with the trial slot free). A retry
    /// that would only fail fast gives up at once instead.
    pub fn admits_at(&self, at: Instant) -> bool {
        let s = Packed::load(self.word.load(Ordering::Acquire));
        match s.state {
            CLOSED => true,
            OPEN => {
                let open_for = u64::try_from(self.open_for.as_millis()).unwrap_or(u64::MAX);
                self.millis(at).saturating_sub(s.opened_at) >= open_for
            }
            _ => !s.trial,
        }
    }

    fn update(&self, f: impl Fn(Packed) -> Option<Packed>) {
        let _result = self
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                f(Packed::load(word)).map(Packed::store)
            });
        #[cfg(feature = "opentelemetry")]
        if let Ok(before) = _result
            && let Some(after) = f(Packed::load(before))
        {
            self.record_state(before, after.state);
        }
    }

    /// A success: closes a half-open breaker (after enough trials) and
    /// resets a closed one's failure count; a closed breaker with no
    /// failures counted is left alone (one atomic load, no write).
    #[inline]
    fn on_success(&self, trial: bool) {
        if !trial && self.word.load(Ordering::Acquire) == CLOSED_CLEAN {
            return;
        }
        self.on_success_slow(trial);
    }

    #[cold]
    #[inline(never)]
    fn on_success_slow(&self, trial: bool) {
        let success_threshold = u64::from(self.success_threshold).min(COUNT_MAX);
        self.update(|s| match (s.state, trial) {
            (CLOSED, false) if s.count > 0 => Some(Packed::closed(0)),
            (HALF_OPEN, true) if s.count + 1 >= success_threshold => Some(Packed::closed(0)),
            (HALF_OPEN, true) => Some(Packed {
                count: s.count + 1,
                trial: false,
                ..s
            }),
            _ => None,
        });
    }

    fn on_failure(&self, trial: bool, now: Instant) {
        let now = self.millis(now);
        let failure_threshold = u64::from(self.failure_threshold).min(COUNT_MAX);
        self.update(|s| match (s.state, trial) {
            (CLOSED, false) if s.count + 1 >= failure_threshold => Some(Packed::open(now)),
            (CLOSED, false) => Some(Packed::closed(s.count + 1)),
            (HALF_OPEN, true) => Some(Packed::open(now)),
            _ => None,
        });
    }

    fn release_trial(&self) {
        self.update(|s| (s.state == HALF_OPEN && s.trial).then_some(Packed { trial: false, ..s }));
    }
}

/// Leave to make one call through a [`CircuitBreaker`]; report how it went
/// with [`success`](Permit::success) or [`failure`](Permit::failure).
#[derive(Debug)]
#[must_use = "report the call's outcome with `success` or `failure`"]
pub struct Permit<'a> {
    breaker: &'a CircuitBreaker,
    trial: bool,
    reported: bool,
}

impl Permit<'_> {
    /// The call succeeded (or the service answered with an error that says
    /// nothing about its health).
    #[inline]
    pub fn success(mut self) {
        self.reported = true;
        self.breaker.on_success(self.trial);
    }

    /// The call failed at `now`.
    pub fn failure(mut self, now: Instant) {
        self.reported = true;
        self.breaker.on_failure(self.trial, now);
    }

    /// Whether this is the half-open trial call.
    #[inline]
    pub fn is_trial(&self) -> bool {
        self.trial
    }
}

impl Drop for Permit<'_> {
    #[inline]
    fn drop(&mut self) {
        if !self.reported && self.trial {
            self.breaker.release_trial();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(base: Instant, ms: u64) -> Instant {
        base + Duration::from_millis(ms)
    }

    #[test]
    fn packing_round_trips() {
        for p in [
            Packed::closed(0),
            Packed::closed(COUNT_MAX),
            Packed::open(TIME_MASK),
            Packed {
                state: HALF_OPEN,
                count: 5,
                trial: true,
                opened_at: 12345,
            },
        ] {
            assert_eq!(Packed::load(p.store()), p);
        }
        assert_eq!(Packed::closed(0).store(), CLOSED_CLEAN);
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
        assert_eq!(b.acquire(at(t, 99)).unwrap_err(), CircuitOpen);
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
        b.acquire_with(clock).unwrap().success();
        b.acquire_with(clock).unwrap().failure(t);
        // Closed with a failure counted: still no clock, and a success resets.
        b.acquire_with(clock).unwrap().success();
        assert_eq!(reads.get(), 0, "closed: no clock read");
        b.acquire_with(clock).unwrap().failure(t);
        b.acquire_with(clock).unwrap().failure(t);
        assert_eq!(
            b.state(),
            CircuitState::Open,
            "the reset count started afresh"
        );
        assert!(b.acquire_with(clock).is_err());
        assert_eq!(reads.get(), 1, "open: the clock is read");
        let later = at(t, 100);
        let trial = b.acquire_with(|| later).unwrap();
        assert!(trial.is_trial());
        trial.success();
        assert_eq!(b.state(), CircuitState::Closed);
    }

    #[test]
    fn a_dropped_trial_frees_the_slot() {
        let b = CircuitBreaker::new(1, 1, Duration::ZERO);
        let t = Instant::now();
        b.acquire(t).unwrap().failure(t);
        let trial = b.acquire(t).unwrap();
        assert!(b.acquire(t).is_err());
        drop(trial);
        assert_eq!(b.state(), CircuitState::HalfOpen);
        assert!(b.acquire(t).unwrap().is_trial());
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
        b.acquire(t).unwrap().failure(t);
        assert_eq!(b.state(), CircuitState::Closed);
    }
}
