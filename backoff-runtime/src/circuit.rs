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

use crate::name::Name;
use core::fmt;
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
    /// A refusal that does not say when a call may pass again (what a
    /// breaker of your own, or a test, builds).
    ///
    /// ```
    /// use backoff_runtime::CircuitOpen;
    ///
    /// assert_eq!(CircuitOpen::new().retry_in(), None);
    /// ```
    pub const fn new() -> Self {
        CircuitOpen { retry_in: None }
    }

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
/// let e = std::io::Error::from(CircuitOpen::new());
/// assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
/// assert!(e.get_ref().unwrap().is::<CircuitOpen>());
/// ```
impl From<CircuitOpen> for std::io::Error {
    fn from(e: CircuitOpen) -> Self {
        std::io::Error::new(std::io::ErrorKind::ConnectionRefused, e)
    }
}

// The packed state:
// | state: 2 | generation: 8 | trial: 1 | count: 14 | time, ms mod 2³⁹: 39 |
const TIME_BITS: u32 = 39;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;
/// Half the time ring: a difference of times at or above it is negative.
const TIME_HALF: u64 = 1 << (TIME_BITS - 1);
const COUNT_SHIFT: u32 = TIME_BITS;
const COUNT_BITS: u32 = 14;
const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;
const TRIAL: u64 = 1 << (COUNT_SHIFT + COUNT_BITS);
const GEN_SHIFT: u32 = COUNT_SHIFT + COUNT_BITS + 1;
const GEN_MASK: u64 = 0xFF;
const STATE_SHIFT: u32 = 62;
const CLOSED: u64 = 0;
const OPEN: u64 = 1;
const HALF_OPEN: u64 = 2;
/// The bits that are zero in a closed breaker with no failure counted,
/// whatever its generation.
const CLEAN_MASK: u64 = (3 << STATE_SHIFT) | (COUNT_MAX << COUNT_SHIFT);
/// The count of a closed rate breaker, which counts in its window instead:
/// never clean, so a success takes the path that records it.
const RATE_MARK: u64 = 1;
/// An `open_for` that never ends (2³⁸ ms, 8.7 years, or more).
const NEVER: u64 = u64::MAX;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Packed {
    state: u64,
    /// Bumped by every change of state and every trial claimed: a permit
    /// reports only to the generation that admitted it.
    generation: u64,
    count: u64,
    trial: bool,
    /// Open: when it opened; half-open: when the trial was claimed
    /// (milliseconds since the breaker's epoch, rounded up, mod 2³⁹).
    at: u64,
}

impl Packed {
    #[inline]
    fn load(word: u64) -> Self {
        Packed {
            state: word >> STATE_SHIFT,
            generation: (word >> GEN_SHIFT) & GEN_MASK,
            count: (word >> COUNT_SHIFT) & COUNT_MAX,
            trial: word & TRIAL != 0,
            at: word & TIME_MASK,
        }
    }

    #[inline]
    fn store(self) -> u64 {
        (self.state << STATE_SHIFT)
            | ((self.generation & GEN_MASK) << GEN_SHIFT)
            | (self.count.min(COUNT_MAX) << COUNT_SHIFT)
            | if self.trial { TRIAL } else { 0 }
            | (self.at & TIME_MASK)
    }

    /// Closed, with `count` consecutive failures, in this generation.
    fn closed(self, count: u64) -> Self {
        Packed {
            state: CLOSED,
            count,
            trial: false,
            at: 0,
            ..self
        }
    }

    /// Opened at `at`: a new generation.
    fn open(self, at: u64) -> Self {
        Packed {
            state: OPEN,
            generation: self.next(),
            count: 0,
            trial: false,
            at,
        }
    }

    /// Closed afresh with `count` (0, or a rate breaker's mark): a new
    /// generation.
    fn reclosed(self, count: u64) -> Self {
        Packed {
            generation: self.next(),
            ..self.closed(count)
        }
    }

    /// Half-open with a trial claimed at `at`: a new generation.
    fn claimed(self, count: u64, at: u64) -> Self {
        Packed {
            state: HALF_OPEN,
            generation: self.next(),
            count,
            trial: true,
            at,
        }
    }

    fn next(self) -> u64 {
        (self.generation + 1) & GEN_MASK
    }
}

/// `now - then` on the 2³⁹ ms ring: zero if `then` is later (a clock read
/// before another thread's), correct up to 2³⁸ ms (8.7 years).
#[inline]
fn since(now: u64, then: u64) -> u64 {
    let d = now.wrapping_sub(then) & TIME_MASK;
    if d >= TIME_HALF { 0 } else { d }
}

/// Milliseconds in `d`, rounded up; [`NEVER`] from 2³⁸ ms.
const fn millis_up(d: Duration) -> u64 {
    let ms = d.as_nanos().div_ceil(1_000_000);
    if ms >= TIME_HALF as u128 {
        NEVER
    } else {
        ms as u64
    }
}

/// Buckets of a rate breaker's window.
const BUCKETS: u64 = 10;
/// A bucket: | generation: 8 | index mod 2²⁴: 24 | calls: 16 | failures: 16 |
const INDEX_MASK: u64 = (1 << 24) - 1;
const TALLY_MAX: u64 = 0xFFFF;

/// How a closed breaker decides to open.
#[derive(Debug)]
enum Trip {
    /// After this many consecutive failures.
    Consecutive(u64),
    /// On a failure ratio over a sliding window.
    Rate(Window),
}

/// The sliding window of a rate breaker: [`BUCKETS`] buckets of
/// `width` ms, each an `AtomicU64` holding its generation, its index
/// (time / width) and its counts.
#[derive(Debug)]
struct Window {
    /// Failures per thousand calls that open the breaker (1..=1000).
    per_mille: u64,
    min_calls: u64,
    width: u64,
    buckets: [AtomicU64; BUCKETS as usize],
}

impl Window {
    /// Counts one call (a failure if `failed`) of `generation` at `now`
    /// (ms since the epoch); returns the window's calls and failures, this
    /// one included. A bucket of an earlier time or generation is
    /// recycled; a call whose bucket already holds a later time (another
    /// thread's clock ran ahead) is not counted.
    fn record(&self, generation: u64, now: u64, failed: bool) -> (u64, u64) {
        let index = now / self.width;
        let stamp = (generation << 24) | (index & INDEX_MASK);
        let fresh = (stamp << 32) | (1 << 16) | u64::from(failed);
        let bucket = &self.buckets[(index % BUCKETS) as usize];
        let _ = bucket.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
            let held = w >> 32;
            if held == stamp {
                ((w >> 16) & TALLY_MAX < TALLY_MAX).then(|| w + (1 << 16) + u64::from(failed))
            } else if held >> 24 == generation
                && ((held & INDEX_MASK).wrapping_sub(index) & INDEX_MASK) < BUCKETS
            {
                None
            } else {
                Some(fresh)
            }
        });
        self.totals(generation, index)
    }

    /// Calls and failures of `generation` in the `BUCKETS` buckets ending
    /// with `index`.
    fn totals(&self, generation: u64, index: u64) -> (u64, u64) {
        let (mut calls, mut failures) = (0, 0);
        for bucket in &self.buckets {
            let w = bucket.load(Ordering::Acquire);
            let held = w >> 32;
            if held >> 24 == generation
                && (index.wrapping_sub(held & INDEX_MASK) & INDEX_MASK) < BUCKETS
            {
                calls += (w >> 16) & TALLY_MAX;
                failures += w & TALLY_MAX;
            }
        }
        (calls, failures)
    }

    /// Whether these counts open the breaker.
    fn trips(&self, (calls, failures): (u64, u64)) -> bool {
        calls >= self.min_calls && failures > 0 && failures * 1000 >= self.per_mille * calls
    }
}

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
/// - A permit from [`acquire`](CircuitBreaker::acquire) or
///   [`acquire_with`](CircuitBreaker::acquire_with) reads the time of a
///   dropped permit (and a rate breaker's successes) from
///   [`clock::for_async`](crate::clock::for_async): tokio's clock inside a
///   runtime with the `tokio` feature (paused time included), else
///   [`Instant::now`]. [`acquire_on`](CircuitBreaker::acquire_on) names
///   the clock.
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
    trip: Trip,
    success_threshold: u64,
    /// `open_for` in ms, rounded up ([`NEVER`] if it never ends).
    open_for_ms: u64,
    /// Its name, for the `backoff.breaker.state` gauge.
    name: Name,
    /// Set by [`join_fleet`](CircuitBreaker::join_fleet): consulted only
    /// when the breaker is open or half-open, and on failures.
    gate: OnceLock<Gate>,
}

/// What a fleet ([`CircuitBreaker::join_fleet`]) tells a local breaker, and hears from
/// it: whether the fleet holds it open (then a trial needs a grant),
/// whether this process was granted the fleet's trial, and whether a call
/// was refused while held (so the fleet's trial is wanted here).
pub(crate) struct Gate {
    flags: AtomicU64,
    /// Every failure reported here (a running total the fleet stores as
    /// it is: pushing it twice changes nothing).
    failures: AtomicU64,
    /// Wakes the fleet's sync task (a failure, a refusal, a closed trial).
    wake: Box<dyn Fn() + Send + Sync>,
}

const HELD: u64 = 1;
const GRANT: u64 = 2;
const WANT: u64 = 4;
/// A success ended a run of failures here (closed, count breaker).
const SUCCEEDED: u64 = 8;
/// The flags' bits from here up count the successes here, not trials',
/// that ended a run of failures (a running total the fleet stores as it
/// is; in the same word as the marks, so a breaker is no larger for it).
const RUN_ENDS_SHIFT: u32 = 8;

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
    fn after_acquire(&self, held: bool, grant: bool, trial: bool) {
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
            epoch: OnceLock::new(),
            trip: Trip::Consecutive(threshold(failure_threshold)),
            success_threshold: threshold(success_threshold),
            open_for_ms: millis_up(open_for),
            name: Name::NONE,
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
        let width = crate::nanos::bucket_ms(window, BUCKETS);
        CircuitBreaker {
            word: AtomicU64::new(RATE_MARK << COUNT_SHIFT),
            epoch: OnceLock::new(),
            trip: Trip::Rate(Window {
                per_mille,
                min_calls: if min_calls == 0 { 1 } else { min_calls as u64 },
                width,
                buckets: [const { AtomicU64::new(0) }; BUCKETS as usize],
            }),
            success_threshold: 1,
            open_for_ms: millis_up(open_for),
            name: Name::NONE,
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
    /// assert!(PAYMENTS.acquire_with(std::time::Instant::now).is_ok());
    /// ```
    pub const fn named(mut self, name: &'static str) -> Self {
        self.name = Name::of(name);
        self
    }

    /// Its [name](CircuitBreaker::named), if it has one.
    ///
    /// ```
    /// use backoff_runtime::CircuitBreaker;
    /// use std::time::Duration;
    ///
    /// let breaker = CircuitBreaker::new(5, 1, Duration::from_secs(30)).named("payments");
    /// assert_eq!(breaker.name(), Some("payments"));
    /// ```
    pub const fn name(&self) -> Option<&'static str> {
        self.name.get()
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
        if let Some(name) = self.name.get()
            && Packed::load(before).state != after
        {
            let state = match after {
                CLOSED => CircuitState::Closed,
                HALF_OPEN => CircuitState::HalfOpen,
                _ => CircuitState::Open,
            };
            crate::record::breaker_state(name, state);
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
    /// A permit dropped without a verdict (the call was cancelled or
    /// panicked) counts as a failure, timed by
    /// [`clock::for_async`](crate::clock::for_async); see
    /// [`acquire_on`](CircuitBreaker::acquire_on) to name the clock.
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
        self.acquire_timed(clock, crate::clock::for_async())
    }

    /// [`acquire_with`](CircuitBreaker::acquire_with) whose permit keeps
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
    pub fn acquire_on(&self, clock: Clock) -> Result<Permit<'_>, CircuitOpen> {
        self.acquire_timed(clock, clock)
    }

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
            return Ok(Permit {
                breaker: self,
                verdict: Verdict {
                    clock,
                    generation: ((word >> GEN_SHIFT) & GEN_MASK) as u8,
                    trial: false,
                },
            });
        }
        self.acquire_not_closed(now(), clock)
    }

    /// [`acquire`](CircuitBreaker::acquire) once the breaker was seen open or
    /// half-open (it may have closed since).
    #[cold]
    #[inline(never)]
    fn acquire_not_closed(&self, now: Instant, clock: Clock) -> Result<Permit<'_>, CircuitOpen> {
        let (floor, ceil) = self.millis(now);
        // Held open by its fleet: a trial only with the fleet's grant, taken
        // here (and given back if no trial is claimed with it).
        let (held, grant) = match self.gate.get() {
            Some(gate) => {
                let flags = gate.flags.fetch_and(!GRANT, Ordering::AcqRel);
                (flags & HELD != 0, flags & GRANT != 0)
            }
            None => (false, false),
        };
        let mut granted = Packed::load(0);
        let result = self
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let s = Packed::load(word);
                granted = match s.state {
                    CLOSED => s,
                    OPEN if held && grant => s.claimed(0, ceil),
                    OPEN if !held && self.passed(floor, s.at) => s.claimed(0, ceil),
                    HALF_OPEN
                        if (!held || grant) && (!s.trial || self.claim_lapsed(floor, s.at)) =>
                    {
                        s.claimed(s.count, ceil)
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
            Ok(_) => Ok(Permit {
                breaker: self,
                verdict: Verdict {
                    clock,
                    generation: granted.generation as u8,
                    trial: granted.trial,
                },
            }),
            Err(word) => Err(self.refusal(Packed::load(word), floor, held)),
        }
    }

    /// The refusal of a call at `now` (ms) by a breaker in state `s`: when
    /// it lets a trial through, if it knows.
    fn refusal(&self, s: Packed, now: u64, held: bool) -> CircuitOpen {
        if held || self.open_for_ms == NEVER {
            return CircuitOpen::new();
        }
        match s.state {
            // Its trial's claim lapses after `open_for` (at least 1 ms).
            OPEN => CircuitOpen::after(Duration::from_millis(
                self.open_for_ms.saturating_sub(since(now, s.at)),
            )),
            _ => CircuitOpen::new(),
        }
    }

    /// Milliseconds since this breaker's epoch, rounded down and up (an
    /// earlier instant, from another clock, counts as the epoch), not yet
    /// reduced to the ring.
    fn millis(&self, now: Instant) -> (u64, u64) {
        let epoch = *self.epoch.get_or_init(|| now);
        let nanos = now.saturating_duration_since(epoch).as_nanos();
        let floor = u64::try_from(nanos / 1_000_000).unwrap_or(u64::MAX);
        let ceil = u64::try_from(nanos.div_ceil(1_000_000)).unwrap_or(u64::MAX);
        (floor, ceil)
    }

    /// Whether `open_for` has passed from `then` (rounded up) to `now`
    /// (rounded down).
    #[inline]
    fn passed(&self, now: u64, then: u64) -> bool {
        self.open_for_ms != NEVER && since(now, then) >= self.open_for_ms
    }

    /// Whether a trial claimed at `then` has had its `open_for` (at least
    /// 1 ms) by `now`.
    #[inline]
    fn claim_lapsed(&self, now: u64, then: u64) -> bool {
        self.open_for_ms != NEVER && since(now, then) >= self.open_for_ms.max(1)
    }

    /// Whether a call at `at` would be let through (closed, or open long
    /// enough for a trial, or half-open with the trial slot free or its
    /// claim lapsed by then). A retry that would only fail fast gives up at
    /// once instead.
    pub fn admits_at(&self, at: Instant) -> bool {
        let s = Packed::load(self.word.load(Ordering::Acquire));
        match s.state {
            CLOSED => true,
            OPEN => self.passed(self.millis(at).0, s.at),
            _ => !s.trial || self.claim_lapsed(self.millis(at).0, s.at),
        }
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
    fn on_success(&self, permit: Verdict) {
        // (A closed rate breaker is never clean: see `RATE_MARK`.)
        if !permit.trial && self.word.load(Ordering::Acquire) & CLEAN_MASK == 0 {
            return;
        }
        self.on_success_slow(permit);
    }

    #[cold]
    #[inline(never)]
    fn on_success_slow(&self, permit: Verdict) {
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
        self.update(|s| match (s.state, trial) {
            _ if s.generation != generation => {
                ended.set(false);
                None
            }
            (CLOSED, false) if s.count > 0 => {
                ended.set(true);
                Some(s.closed(0))
            }
            (HALF_OPEN, true) if s.trial && s.count + 1 >= self.success_threshold => {
                Some(s.reclosed(match self.trip {
                    Trip::Consecutive(_) => 0,
                    Trip::Rate(_) => RATE_MARK,
                }))
            }
            (HALF_OPEN, true) if s.trial => Some(Packed {
                count: s.count + 1,
                trial: false,
                ..s
            }),
            _ => {
                ended.set(false);
                None
            }
        });
        if let Some(gate) = self.gate.get() {
            if !trial {
                // A success after failures: the fleet's count starts
                // again. (Marked after the reset, so the fleet's thread
                // never reads the count from before it with the mark.)
                if ended.get() {
                    gate.flags.fetch_add(1 << RUN_ENDS_SHIFT, Ordering::AcqRel);
                }
                gate.flags.fetch_or(SUCCEEDED, Ordering::AcqRel);
            }
            (gate.wake)();
        }
    }

    fn on_failure(&self, permit: Verdict, now: Instant) {
        let generation = u64::from(permit.generation);
        let ceil = self.millis(now).1;
        match (&self.trip, permit.trial) {
            (Trip::Consecutive(threshold), false) => self.update(|s| match s.state {
                _ if s.generation != generation => None,
                CLOSED if s.count + 1 >= *threshold => Some(s.open(ceil)),
                CLOSED => Some(s.closed(s.count + 1)),
                _ => None,
            }),
            (Trip::Rate(window), false) => self.record_closed(window, generation, now, true),
            (_, true) => self.update(|s| {
                (s.state == HALF_OPEN && s.trial && s.generation == generation)
                    .then(|| s.open(ceil))
            }),
        }
        if let Some(gate) = self.gate.get() {
            gate.failures.fetch_add(1, Ordering::AcqRel);
            (gate.wake)();
        }
    }

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

    /// `open_for`, in milliseconds (at least 1, at most about 35 years):
    /// how long a fleet's trial is held before another process may claim
    /// it.
    pub fn open_for_ms(&self) -> u64 {
        self.open_for_ms.clamp(1, TIME_HALF)
    }

    /// Loads every atomic once: a loom model calls this before it spawns,
    /// so the lazily created loom atomics exist before any thread races.
    #[cfg(all(test, loom))]
    pub(crate) fn touch(&self) {
        self.word.load(Ordering::Acquire);
        if let Trip::Rate(window) = &self.trip {
            window.totals(0, 0);
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
        let (floor, ceil) = self.millis(now);
        if window.trips(window.record(generation, floor, failed)) {
            // (If the word changed meanwhile, another report opened it or
            // the generation is over.)
            let opened = self.word.compare_exchange(
                word,
                s.open(ceil).store(),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            if opened.is_ok() {
                self.record_state(word, OPEN);
            }
        }
    }

    fn release(&self, permit: Verdict) {
        let generation = u64::from(permit.generation);
        self.update(|s| {
            (s.state == HALF_OPEN && s.trial && s.generation == generation)
                .then_some(Packed { trial: false, ..s })
        });
    }
}

/// Leave to make one call through a [`CircuitBreaker`]; report how it went
/// with [`success`](Permit::success), [`failure`](Permit::failure) or
/// [`release`](Permit::release).
///
/// **Dropped without a verdict, a permit counts as a failure**, at the time
/// its clock reads then: a cancelled call (an `attempt_timeout` or
/// `timeout` that fired, a caller's own `tokio::time::timeout`, a dropped
/// future) or a panic is a failed call.
///
/// ```
/// use backoff_runtime::{CircuitBreaker, CircuitState};
/// use std::time::Duration;
///
/// let breaker = CircuitBreaker::new(2, 1, Duration::from_secs(30));
/// for _ in 0..2 {
///     let permit = breaker.acquire_on(backoff_runtime::clock::system).unwrap();
///     drop(permit); // the call hung and was cancelled
/// }
/// assert_eq!(breaker.state(), CircuitState::Open);
/// ```
#[derive(Debug)]
#[must_use = "report the call's outcome with `success` or `failure` (dropped, it counts as a failure)"]
pub struct Permit<'a> {
    breaker: &'a CircuitBreaker,
    verdict: Verdict,
}

/// What a permit tells its breaker with a verdict.
#[derive(Debug, Clone, Copy)]
struct Verdict {
    /// Times a verdict given by dropping the permit (and a rate breaker's
    /// successes).
    clock: Clock,
    generation: u8,
    trial: bool,
}

impl Permit<'_> {
    /// The call succeeded (or the service answered with an error that says
    /// nothing about its health).
    #[inline]
    pub fn success(self) {
        // (No drop: that would be a failure.)
        let permit = ManuallyDrop::new(self);
        permit.breaker.on_success(permit.verdict);
    }

    /// The call failed at `now`.
    pub fn failure(self, now: Instant) {
        let permit = ManuallyDrop::new(self);
        permit.breaker.on_failure(permit.verdict, now);
    }

    /// The call was not made after all: counts as nothing, and a half-open
    /// trial frees its slot for the next caller.
    ///
    /// ```
    /// use backoff_runtime::{CircuitBreaker, CircuitState};
    /// use std::time::{Duration, Instant};
    ///
    /// let breaker = CircuitBreaker::new(1, 1, Duration::ZERO);
    /// let t = Instant::now();
    /// breaker.acquire(t).unwrap().release();
    /// assert_eq!(breaker.state(), CircuitState::Closed);
    /// ```
    pub fn release(self) {
        let permit = ManuallyDrop::new(self);
        if permit.verdict.trial {
            permit.breaker.release(permit.verdict);
        }
    }

    /// Whether this is the half-open trial call.
    #[inline]
    pub fn is_trial(&self) -> bool {
        self.verdict.trial
    }
}

/// No verdict: a cancelled or panicked call, a failure now.
impl Drop for Permit<'_> {
    #[cold]
    #[inline(never)]
    fn drop(&mut self) {
        let now = (self.verdict.clock)();
        self.breaker.on_failure(self.verdict, now);
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
        let zero = Packed::load(0);
        for p in [
            zero.closed(0),
            zero.closed(COUNT_MAX),
            zero.open(TIME_MASK),
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
        assert_eq!(zero.closed(0).store(), 0);
        assert_eq!(zero.open(0).reclosed(0).store() & CLEAN_MASK, 0);
        assert_ne!(zero.open(0).reclosed(RATE_MARK).store() & CLEAN_MASK, 0);
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
        assert!(b.join_fleet(Box::new(move || {
            w.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        })));
        assert!(!b.join_fleet(Box::new(|| {})), "one fleet");
        let t = Instant::now();
        // A failure wakes the fleet's thread; the report is the count.
        b.acquire(t).unwrap().failure(t);
        assert_eq!(wakes.load(core::sync::atomic::Ordering::Relaxed), 1);
        assert_eq!(
            b.fleet_report(t),
            FleetReport::Count {
                failures: 1,
                run: 1
            }
        );
        // A success after it is marked (once) and wakes it.
        b.acquire(t).unwrap().success();
        assert!(b.fleet_take_succeeded());
        assert!(!b.fleet_take_succeeded());
        assert_eq!(
            b.fleet_report(t),
            FleetReport::Count {
                failures: 1,
                run: 0
            }
        );
        // Held: open, and nothing passes, not even after open_for.
        b.fleet_hold(t);
        assert!(b.fleet_held());
        assert_eq!(b.state(), CircuitState::Open);
        assert_eq!(
            b.fleet_report(t),
            FleetReport::Count {
                failures: 1,
                run: 0
            },
            "held: no run"
        );
        assert!(b.acquire(at(t, 500)).is_err());
        assert_eq!(
            b.fleet_take_want(),
            TrialWanted {
                wanted: true,
                grant_unused: false
            }
        );
        // A grant: one trial, at once (the fleet timed it).
        b.fleet_grant();
        let trial = b.acquire(at(t, 1)).unwrap();
        assert!(trial.is_trial());
        assert!(b.acquire(at(t, 1)).is_err());
        assert_eq!(
            b.fleet_take_want(),
            TrialWanted {
                wanted: true,
                grant_unused: false
            }
        );
        trial.failure(at(t, 2));
        assert!(b.acquire(at(t, 600)).is_err(), "the grant was used");
        // A grant not used for a trial (the trial slot is taken) is kept.
        b.fleet_grant();
        let trial = b.acquire(at(t, 3)).unwrap();
        b.fleet_grant();
        assert!(b.acquire(at(t, 3)).is_err());
        assert_eq!(
            b.fleet_take_want(),
            TrialWanted {
                wanted: true,
                grant_unused: true
            }
        );
        trial.success();
        assert_eq!(b.state(), CircuitState::Closed);
        // (Held and closed: the sync thread reports the trial's success and
        // releases it.)
        assert!(b.fleet_held());
        b.fleet_release(true);
        // Released without closing: local rules again (open_for from the
        // hold).
        b.fleet_hold(at(t, 10));
        b.fleet_release(false);
        assert!(!b.fleet_held());
        assert!(b.acquire(at(t, 50)).is_err());
        assert!(b.acquire(at(t, 111)).unwrap().is_trial());
        // Released closing: closed, whatever it was.
        b.fleet_hold(at(t, 200));
        b.fleet_release(true);
        assert_eq!(b.state(), CircuitState::Closed);
        assert!(b.acquire(at(t, 200)).is_ok());
    }
}
