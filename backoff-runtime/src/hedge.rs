//! Hedged calls (gRPC A6 hedging, feature `tokio`): [`Policy::hedge_async`]
//! builds a [`Hedge`], which runs an async operation as overlapping
//! attempts, and [`Latency`] learns the delay to hedge after (`"p95"`).
//!
//! The rule: attempt 1 starts at once; while no attempt has given an
//! accepted outcome, attempt k+1 starts the hedge delay after attempt k
//! (an [`AttemptKind::Hedge`]), or at once when an attempt in flight fails
//! with an error `when` would retry (an [`AttemptKind::Retry`]). The
//! policy's attempt limit bounds all the attempts started. The first
//! accepted outcome is returned and the attempts still in flight are
//! dropped (cancelled). A [`Decision::Stop`] ends the call at once, with
//! its error. When every attempt failed, the last error is returned.
//!
//! Each attempt after the first is a step of the call's [`RetryState`],
//! through the same driver as every retry loop of this crate: it needs the
//! attempt limit and `max_elapsed` to allow it, an open [`CircuitBreaker`]
//! refuses it (and each attempt holds a permit of its own: a cancelled
//! loser's permit is released, it counts as nothing), and a [`RetryBudget`]
//! must pay a token for it (a success deposits). Once a hedge is refused,
//! no other starts: the call waits for the attempts in flight. The
//! policy's schedule is not slept: give [`Policy::immediate`] with the
//! attempt limit (a schedule's delay still counts against `max_elapsed`).
//!
//! A verdict of [`Decision::RetryAfter`] or [`Decision::Throttled`] is
//! taken as [`Decision::Retry`] would be, its delay not slept: the next
//! attempt starts at once (within the throttled schedule's limit, if the
//! policy has one). The recorder (feature `record`) is told each
//! attempt that ended by its [`AttemptKind`] (`attempt.type`: `original`,
//! `retry`, `hedge`); an attempt cancelled because another won has no
//! outcome and is not counted, but the call's `attempts` counts every
//! attempt started. No `tracing` events are emitted for hedged calls yet.
//!
//! Dropping the call unfinished (the caller's timeout, a `select!`) counts
//! what dropping an unhedged call counts: one breaker failure, for the
//! attempt that was running first; the attempts started while another was
//! in flight release their permits and count as nothing. So a cancelled
//! 3-attempt call adds one failure, not three (it does not open a
//! threshold-3 breaker by itself).
//!
//! With a learned delay ([`HedgeDelay::P95`], [`HedgeDelay::Quantile`]),
//! every attempt teaches the [`Latency`]: one that answered `Ok` after `t`
//! is a sample `t`; one that failed, lost the race or was dropped with
//! the call after running `t` is a censored sample, "at least `t`". The
//! learned delay is readable with [`HedgeDelay::get`] or
//! [`Latency::quantile`].
//!
//! The attempts run concurrently inside the call's own future: no task is
//! spawned and nothing is allocated. The future holds `N` slots (a const
//! generic, at most [`MAX_ATTEMPTS`]: a larger `N` does not compile), is
//! `Send` when the attempts' futures and the hooks are, and dropping it
//! drops every attempt in flight.
//!
//! ```
//! use backoff_runtime::Policy;
//! use backoff_runtime::hedge::HedgeDelay;
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::time::Duration;
//! use tokio::time::{sleep, Instant};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! let calls = AtomicU32::new(0);
//! let began = Instant::now();
//! let policy = Policy::immediate().attempts(3);
//! let result: Result<u32, &str> = policy
//!     .hedge_async::<3>(HedgeDelay::After(Duration::from_millis(20)))
//!     .call(|| async {
//!         let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
//!         // The first attempt is stuck for a second, the hedge takes 10 ms.
//!         sleep(Duration::from_millis(if n == 1 { 1000 } else { 10 })).await;
//!         Ok(n)
//!     })
//!     .await;
//! assert_eq!(result, Ok(2));
//! assert_eq!(began.elapsed(), Duration::from_millis(30));
//! # }
//! ```

use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use core::task::{Context, Poll};
use core::time::Duration;
use pin_project_lite::pin_project;

use crate::budget::RetryBudget;
use crate::circuit::{CircuitBreaker, CircuitOpen};
use crate::clock;
use crate::control::{Budget, Circuit};
use crate::decision::Decision;
#[cfg(doc)]
use crate::decision::IntoDecision;
use crate::driver::{self, HedgeCount, Hedging, Hooks, Lazy, NoTrace, Origin, Trace};
use crate::event::{AttemptContext, AttemptKind, RetryEvent};
use crate::policy::Policy;
use crate::recording::{HedgedRecording, Recording};
use crate::report::GiveUp;
use crate::retrying::{AcceptAll, Classify, NoHook, OnGiveUp, RetryAll};
use crate::state::RetryState;
use crate::strategy::Strategy;

/// The most attempts a hedged call holds (gRPC caps hedging at 5).
///
/// ```
/// assert_eq!(backoff_runtime::hedge::MAX_ATTEMPTS, 8);
/// ```
pub const MAX_ATTEMPTS: usize = 8;

/// How long a hedged call waits for an attempt before starting the next.
///
/// ```
/// use backoff_runtime::hedge::{HedgeDelay, Latency};
/// use std::time::Duration;
///
/// static LATENCY: Latency = Latency::new();
/// let fixed = HedgeDelay::After(Duration::from_millis(20));
/// let learned = HedgeDelay::P95(&LATENCY);
/// assert_eq!(fixed.get(), Duration::from_millis(20));
/// assert_eq!(learned.get(), Latency::DEFAULT); // cold: no samples yet
/// ```
#[derive(Debug, Clone, Copy)]
pub enum HedgeDelay<'a> {
    /// A fixed delay (`hedge = "20ms"`).
    After(Duration),
    /// The 95th percentile of every attempt's latency, learned
    /// (`hedge = "p95"`): read when the call begins; each attempt's latency
    /// is recorded into it, an attempt dropped unfinished as "at least"
    /// what it ran (see [`Latency`]).
    P95(&'a Latency),
    /// Another quantile, in `(0, 1)`, of the same estimate
    /// (`hedge = "p99"` is `Quantile(&latency, 0.99)`). Build it with
    /// [`HedgeDelay::quantile`], which refuses a NaN or out-of-range `q`
    /// (at compile time in a `const`); given one directly,
    /// [`Policy::hedge_async`] panics.
    Quantile(&'a Latency, f64),
}

impl<'a> HedgeDelay<'a> {
    /// `Quantile(latency, q)`, checked.
    ///
    /// # Panics
    ///
    /// Unless `0 < q < 1` (a NaN `q` included): `q = 1` would wait for the
    /// slowest attempt ever (never hedging), `q = 0` hedge at once. In a
    /// `const` or `static`, the panic is a compile error.
    ///
    /// ```
    /// use backoff_runtime::hedge::{HedgeDelay, Latency};
    ///
    /// static LATENCY: Latency = Latency::new();
    /// const P99: HedgeDelay<'static> = HedgeDelay::quantile(&LATENCY, 0.99);
    /// assert!(matches!(P99, HedgeDelay::Quantile(_, q) if q == 0.99));
    /// ```
    ///
    /// ```should_panic
    /// use backoff_runtime::hedge::{HedgeDelay, Latency};
    ///
    /// let latency = Latency::new();
    /// let _ = HedgeDelay::quantile(&latency, f64::NAN); // panics
    /// ```
    ///
    /// ```compile_fail
    /// use backoff_runtime::hedge::{HedgeDelay, Latency};
    ///
    /// static LATENCY: Latency = Latency::new();
    /// // error: a hedge quantile is in (0, 1)
    /// const ALL: HedgeDelay<'static> = HedgeDelay::quantile(&LATENCY, 1.0);
    /// # fn main() { let _ = ALL; }
    /// ```
    #[track_caller]
    pub const fn quantile(latency: &'a Latency, q: f64) -> Self {
        assert!(
            q > 0.0 && q < 1.0,
            "a hedge quantile is in (0, 1) (and not NaN)"
        );
        HedgeDelay::Quantile(latency, q)
    }

    /// The delay now: the fixed one, or the learned quantile (what the next
    /// call hedges after). Readable at any time, from any thread.
    ///
    /// ```
    /// use backoff_runtime::hedge::{HedgeDelay, Latency};
    /// use std::time::Duration;
    ///
    /// static LATENCY: Latency = Latency::new();
    /// for _ in 0..100 {
    ///     LATENCY.record(Duration::from_millis(10));
    /// }
    /// let delay = HedgeDelay::quantile(&LATENCY, 0.99).get();
    /// assert!(delay > Duration::from_millis(8) && delay < Duration::from_millis(12));
    /// ```
    ///
    /// # Panics
    ///
    /// If it is a `Quantile` of a NaN.
    pub fn get(&self) -> Duration {
        match self {
            HedgeDelay::After(d) => *d,
            HedgeDelay::P95(latency) => latency.p95(),
            HedgeDelay::Quantile(latency, q) => latency.quantile(*q),
        }
    }
}

/// Number of buckets of a [`Latency`].
const BUCKETS: usize = 40;

/// A sample's weight in a bucket (fixed point, so that halving keeps the
/// rare tail samples for many windows instead of rounding them to zero).
const UNIT: u32 = 256;

/// A lock-free latency estimate for `hedge = "p95"`, one per function,
/// usable from a `static` (const constructor, no allocation ever).
///
/// It learns from every attempt, the losers included. An attempt that
/// answered after `t` is a sample `t` ([`record`](Latency::record)); an
/// attempt dropped after running for `t` (it lost the race, its call was
/// cancelled, or it failed) only says the latency is *at least* `t`, a
/// censored sample ([`record_at_least`](Latency::record_at_least)). The
/// quantiles are those of the Kaplan–Meier estimate of the latency's
/// distribution, so `p99` converges to the function's p99, not to the p99
/// of the attempts that won (which hedging itself keeps short).
///
/// It is two histograms of atomics: bucket `i` counts latencies in
/// `[FLOOR·2^((i−1)/2), FLOOR·2^(i/2))`, log-spaced by √2 from
/// [`FLOOR`](Latency::FLOOR) (1 ms; bucket 0 holds everything under it)
/// up to about 12 minutes (the last bucket holds the rest). A quantile is
/// interpolated geometrically inside its bucket, and is never under the
/// floor. A censored sample counts as at risk for half of its own bucket
/// (the actuarial convention).
///
/// Until [`WARM`](Latency::WARM) samples have been recorded, the estimate
/// is [`DEFAULT`](Latency::DEFAULT) (a cold start hedges after 100 ms).
///
/// It follows change by decay: every [`WINDOW`](Latency::WINDOW) samples
/// each bucket is halved, so a sample's weight halves with every 1,024
/// samples recorded after it and a shifted latency moves the estimate
/// within about two windows. (Concurrent records during a halving may be
/// counted before or after it: an estimate, not a ledger.)
///
/// The learned delay is readable at any time, from any thread:
///
/// ```
/// use backoff_runtime::hedge::Latency;
/// use std::time::Duration;
///
/// static LATENCY: Latency = Latency::new();
/// for i in 0..100u64 {
///     // 95 calls take 10 ms, 5 take a second.
///     LATENCY.record(Duration::from_millis(if i % 20 == 0 { 1000 } else { 10 }));
/// }
/// // Inside the bucket [8 ms, 11.3 ms) of the 10 ms samples.
/// let p95 = LATENCY.p95();
/// assert!(p95 > Duration::from_millis(8) && p95 <= Duration::from_nanos(11_313_708));
/// // p99 is among the slow ones.
/// assert!(LATENCY.quantile(0.99) > Duration::from_millis(724));
/// ```
///
/// The losers' censored samples are what keep the tail in view: here the
/// slow attempts never answer, each is dropped after 50 ms, yet the
/// estimate knows a tenth of the calls take longer than that.
///
/// ```
/// use backoff_runtime::hedge::Latency;
/// use std::time::Duration;
///
/// let latency = Latency::new();
/// for i in 0..1000u64 {
///     if i % 10 == 0 {
///         latency.record_at_least(Duration::from_millis(50)); // dropped
///     } else {
///         latency.record(Duration::from_millis(10));
///     }
/// }
/// // p95 is beyond every answer: at least the 50 ms the losers ran.
/// assert!(latency.p95() >= Duration::from_millis(45));
/// ```
#[derive(Debug)]
pub struct Latency {
    /// Attempts that answered, by bucket (`UNIT` each, decayed).
    answered: [AtomicU32; BUCKETS],
    /// Attempts dropped (or failed) while in the bucket: at least that.
    censored: [AtomicU32; BUCKETS],
    /// Samples since the last halving.
    window: AtomicU32,
    /// Samples ever recorded (saturating), for the cold start.
    seen: AtomicU64,
}

impl Default for Latency {
    fn default() -> Self {
        Self::new()
    }
}

impl Latency {
    /// The shortest estimate, and the first bucket's upper edge: 1 ms.
    pub const FLOOR: Duration = Duration::from_millis(1);
    /// The estimate before [`WARM`](Latency::WARM) samples: 100 ms.
    pub const DEFAULT: Duration = Duration::from_millis(100);
    /// Samples (answered or censored) before the estimate is learned: 20.
    pub const WARM: u64 = 20;
    /// Samples between two halvings of every bucket: 1,024.
    pub const WINDOW: u32 = 1024;

    /// An empty estimate.
    ///
    /// ```
    /// use backoff_runtime::hedge::Latency;
    ///
    /// static LATENCY: Latency = Latency::new();
    /// assert_eq!(LATENCY.samples(), 0);
    /// ```
    pub const fn new() -> Self {
        Latency {
            answered: [const { AtomicU32::new(0) }; BUCKETS],
            censored: [const { AtomicU32::new(0) }; BUCKETS],
            window: AtomicU32::new(0),
            seen: AtomicU64::new(0),
        }
    }

    /// The bucket of `latency`.
    fn bucket(latency: Duration) -> usize {
        let mut i = 0;
        while i + 1 < BUCKETS && latency >= Self::edge(i) {
            i += 1;
        }
        i
    }

    /// The upper edge of bucket `i`: `FLOOR·2^(i/2)` (√2 steps, the odd
    /// ones rounded to the nanosecond).
    fn edge(i: usize) -> Duration {
        let whole = Self::FLOOR.saturating_mul(1u32 << (i / 2).min(31));
        if i.is_multiple_of(2) {
            whole
        } else {
            // ×√2, in integer nanoseconds.
            let nanos = whole.as_nanos().saturating_mul(1_414_213_562) / 1_000_000_000;
            Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
        }
    }

    /// Records the latency of an attempt that answered. (A hedged call
    /// records an attempt that returned `Ok` here, and one that returned
    /// `Err` with [`record_at_least`](Latency::record_at_least): how long
    /// an answer it could use would have taken is only known to be longer.)
    ///
    /// ```
    /// use backoff_runtime::hedge::Latency;
    /// use std::time::Duration;
    ///
    /// let latency = Latency::new();
    /// latency.record(Duration::from_millis(3));
    /// assert_eq!(latency.samples(), 1);
    /// ```
    pub fn record(&self, latency: Duration) {
        self.add(&self.answered, latency);
    }

    /// Records an attempt dropped after running for `ran` without an
    /// answer (a hedge's loser, or one cancelled with its call): its
    /// latency is at least `ran` (a censored sample).
    ///
    /// ```
    /// use backoff_runtime::hedge::Latency;
    /// use std::time::Duration;
    ///
    /// let latency = Latency::new();
    /// for _ in 0..20 {
    ///     latency.record(Duration::from_millis(10));
    ///     latency.record_at_least(Duration::from_millis(5)); // says little
    /// }
    /// assert_eq!(latency.samples(), 40);
    /// assert!(latency.quantile(0.5) < Duration::from_nanos(11_313_708));
    /// ```
    pub fn record_at_least(&self, ran: Duration) {
        self.add(&self.censored, ran);
    }

    fn add(&self, buckets: &[AtomicU32; BUCKETS], latency: Duration) {
        buckets[Self::bucket(latency)].fetch_add(UNIT, Ordering::Relaxed);
        let _ = self
            .seen
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_add(1));
        if self.window.fetch_add(1, Ordering::Relaxed) + 1 >= Self::WINDOW {
            self.window.store(0, Ordering::Relaxed);
            for bucket in self.answered.iter().chain(&self.censored) {
                let _ = bucket.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| Some(c / 2));
            }
        }
    }

    /// Samples recorded so far, answered and censored (saturating; not
    /// decayed).
    ///
    /// ```
    /// use backoff_runtime::hedge::Latency;
    /// use std::time::Duration;
    ///
    /// let latency = Latency::new();
    /// for _ in 0..3 {
    ///     latency.record(Duration::from_millis(5));
    /// }
    /// assert_eq!(latency.samples(), 3);
    /// ```
    pub fn samples(&self) -> u64 {
        self.seen.load(Ordering::Relaxed)
    }

    /// The `q` quantile of the recent latencies, the learned delay that
    /// `HedgeDelay::Quantile(&latency, q)` hedges after (readable at any
    /// time): where the Kaplan–Meier survival of the answered and censored
    /// samples falls to `1 − q`, interpolated inside its bucket, at least
    /// [`FLOOR`](Latency::FLOOR); [`DEFAULT`](Latency::DEFAULT) while
    /// cold. When the survival never falls that far (the slowest samples
    /// were all dropped before they answered), the upper edge of the
    /// slowest bucket seen: the latency is at least that.
    ///
    /// `q` is clamped to `0.0..=1.0`.
    ///
    /// # Panics
    ///
    /// If `q` is NaN.
    ///
    /// ```
    /// use backoff_runtime::hedge::Latency;
    /// use std::time::Duration;
    ///
    /// let latency = Latency::new();
    /// for _ in 0..50 {
    ///     latency.record(Duration::from_micros(100)); // under the floor
    /// }
    /// assert_eq!(latency.quantile(0.5), Latency::FLOOR);
    /// ```
    pub fn quantile(&self, q: f64) -> Duration {
        assert!(!q.is_nan(), "a latency quantile must be a number, not NaN");
        if self.samples() < Self::WARM {
            return Self::DEFAULT;
        }
        let answered: [u32; BUCKETS] =
            core::array::from_fn(|i| self.answered[i].load(Ordering::Relaxed));
        let censored: [u32; BUCKETS] =
            core::array::from_fn(|i| self.censored[i].load(Ordering::Relaxed));
        let mut at_risk: f64 = answered
            .iter()
            .chain(&censored)
            .map(|&c| f64::from(c))
            .sum();
        if at_risk == 0.0 {
            return Self::DEFAULT;
        }
        let target = 1.0 - q.clamp(0.0, 1.0);
        // The survival at the lower edge of the current bucket.
        let mut survival = 1.0f64;
        let mut slowest = 0;
        for i in 0..BUCKETS {
            let (d, c) = (f64::from(answered[i]), f64::from(censored[i]));
            if d + c > 0.0 {
                slowest = i;
            }
            let exposed = at_risk - c / 2.0;
            let hazard = if exposed > 0.0 {
                (d / exposed).min(1.0)
            } else {
                0.0
            };
            let next = survival * (1.0 - hazard);
            if d > 0.0 && next <= target {
                if i == 0 {
                    return Self::FLOOR;
                }
                // Geometric interpolation inside [lo, hi).
                let (lo, hi) = (Self::edge(i - 1).as_secs_f64(), Self::edge(i).as_secs_f64());
                let f = ((survival - target) / (survival - next)).clamp(0.0, 1.0);
                let at = lo * (hi / lo).powf(f);
                return Duration::try_from_secs_f64(at)
                    .unwrap_or(Self::edge(i))
                    .max(Self::FLOOR);
            }
            survival = next;
            at_risk -= d + c;
            if at_risk <= 0.0 {
                break;
            }
        }
        Self::edge(slowest).max(Self::FLOOR)
    }

    /// The 95th percentile (see [`quantile`](Latency::quantile)).
    ///
    /// ```
    /// use backoff_runtime::hedge::Latency;
    /// use std::time::Duration;
    ///
    /// let latency = Latency::new();
    /// for ms in 1..=100 {
    ///     latency.record(Duration::from_millis(ms));
    /// }
    /// // The 95th sample, 95 ms, is in the bucket [90.5 ms, 128 ms), with
    /// // 91..=100 ms: half of them are above p95, which is interpolated
    /// // halfway (geometrically) into the bucket.
    /// let p95 = latency.p95();
    /// assert_eq!(p95.as_millis(), 107);
    /// ```
    pub fn p95(&self) -> Duration {
        self.quantile(0.95)
    }
}

mod sealed {
    use super::Latency;
    use crate::circuit::Permit;
    use crate::clock;
    use crate::event::AttemptKind;
    use std::time::Instant;

    /// What a slot keeps of its attempt besides the future. Dropped with
    /// its attempt unfinished (the caller dropped the call), it tells the
    /// breaker and the latency estimate: see [`Drop`].
    pub struct Meta<'p> {
        pub kind: AttemptKind,
        /// Its number in the call, from 1, as its `context` says.
        pub number: u32,
        /// When it began (read when recording or learning latency).
        pub began: Option<Instant>,
        /// The breaker's permit for it.
        pub permit: Option<Permit<'p>>,
        /// Whether another attempt was in flight when it started: dropped
        /// unfinished, its permit is released (the call's cancellation is
        /// the older attempt's failure, counted once).
        pub quiet: bool,
        /// The estimate its latency teaches (timed by the async clock, as
        /// `began` was).
        pub learn: Option<&'p Latency>,
    }

    impl Drop for Meta<'_> {
        #[inline]
        fn drop(&mut self) {
            if self.permit.is_some() || self.learn.is_some() {
                self.unfinished();
            }
        }
    }

    impl Meta<'_> {
        /// Dropped with its attempt unfinished: the permit is a failure
        /// unless `quiet` (then released), the latency "at least" what ran.
        #[cold]
        #[inline(never)]
        fn unfinished(&mut self) {
            if let Some(permit) = self.permit.take()
                && self.quiet
            {
                permit.release();
            } // (else dropped: one failure, as a cancelled plain call)
            if let (Some(latency), Some(began)) = (self.learn.take(), self.began) {
                latency.record_at_least(clock::for_async()().saturating_duration_since(began));
            }
        }
    }
}
use sealed::Meta;

pin_project! {
    /// One attempt's slot of a hedged call and the slots after it (a cons
    /// list, so that `N` futures are pinned without `unsafe`). You never
    /// name it: [`Capacity`] does.
    pub struct Slot<'p, F, Rest> {
        #[pin]
        head: Option<F>,
        meta: Option<Meta<'p>>,
        #[pin]
        rest: Rest,
    }
}

/// The slots of a hedged call: `()` (none) or a [`Slot`] and the rest.
/// Implemented for them alone.
pub trait Slots<'p, F: Future>: sealed_slots::Sealed {
    /// How many.
    const LEN: u32;
    #[doc(hidden)]
    fn empty() -> Self;
    #[doc(hidden)]
    fn start(self: Pin<&mut Self>, index: u32, attempt: F, meta: Meta<'p>);
    #[doc(hidden)]
    fn poll_any(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(F::Output, Meta<'p>)>;
    #[doc(hidden)]
    fn cancel_all(self: Pin<&mut Self>);
}

mod sealed_slots {
    /// Sealed: [`Slots`](super::Slots) is implemented here alone.
    pub trait Sealed {}
    impl Sealed for () {}
    impl<F, R> Sealed for super::Slot<'_, F, R> {}
}

impl<'p, F: Future> Slots<'p, F> for () {
    const LEN: u32 = 0;
    fn empty() -> Self {}
    fn start(self: Pin<&mut Self>, _: u32, _: F, _: Meta<'p>) {
        debug_assert!(false, "no slot left");
    }
    fn poll_any(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<(F::Output, Meta<'p>)> {
        Poll::Pending
    }
    fn cancel_all(self: Pin<&mut Self>) {}
}

impl<'p, F: Future, R: Slots<'p, F>> Slots<'p, F> for Slot<'p, F, R> {
    const LEN: u32 = 1 + R::LEN;

    fn empty() -> Self {
        Slot {
            head: None,
            meta: None,
            rest: R::empty(),
        }
    }

    fn start(self: Pin<&mut Self>, index: u32, attempt: F, meta: Meta<'p>) {
        let this = self.project();
        if index == 0 {
            let mut head = this.head;
            head.set(Some(attempt));
            *this.meta = Some(meta);
        } else {
            this.rest.start(index - 1, attempt, meta);
        }
    }

    fn poll_any(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(F::Output, Meta<'p>)> {
        let this = self.project();
        let mut head = this.head;
        if let Some(attempt) = head.as_mut().as_pin_mut()
            && let Poll::Ready(output) = attempt.poll(cx)
        {
            head.set(None);
            if let Some(meta) = this.meta.take() {
                return Poll::Ready((output, meta));
            }
        }
        this.rest.poll_any(cx)
    }

    fn cancel_all(self: Pin<&mut Self>) {
        let this = self.project();
        let mut head = this.head;
        head.set(None);
        if let Some(mut meta) = this.meta.take()
            && let Some(permit) = meta.permit.take()
        {
            // Cancelled because another attempt won: not a failure. (The
            // meta, dropped, teaches the estimate "at least this long".)
            permit.release();
        }
        this.rest.cancel_all();
    }
}

/// The capacity of a hedged call: `N` attempt slots, for `N` in
/// `1..=MAX_ATTEMPTS` (see [`Holds`]).
///
/// ```
/// use backoff_runtime::hedge::{Capacity, Holds, Slots};
/// use std::future::Ready;
///
/// type Three = <Capacity<3> as Holds<'static, Ready<Result<u32, ()>>>>::Slots;
/// assert_eq!(<Three as Slots<'static, Ready<Result<u32, ()>>>>::LEN, 3);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Capacity<const N: usize>;

/// The slots `Capacity<N>` stands for: implemented for `N` in
/// `1..=`[`MAX_ATTEMPTS`] alone, so a larger `N` is a compile error.
///
/// ```compile_fail
/// use backoff_runtime::Policy;
/// use backoff_runtime::hedge::HedgeDelay;
/// use std::time::Duration;
///
/// # async fn f() {
/// let policy = Policy::immediate().attempts(9);
/// // error: a hedged call holds 1 to 8 attempts
/// let _ = policy
///     .hedge_async::<9>(HedgeDelay::After(Duration::from_millis(20)))
///     .call(|| async { Ok::<u32, ()>(1) })
///     .await;
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "a hedged call holds at most 8 attempts: `{Self}` is too many",
    label = "give `N` from 1 to 8",
    note = "gRPC caps hedging at 5 attempts; each attempt is a slot in the call's future"
)]
pub trait Holds<'p, F: Future> {
    /// `N` slots.
    type Slots: Slots<'p, F>;
}

impl<'p, F: Future> Holds<'p, F> for Capacity<1> {
    type Slots = Slot<'p, F, ()>;
}

macro_rules! capacity {
    ($($n:literal => $m:literal),*) => {$(
        impl<'p, F: Future> Holds<'p, F> for Capacity<$n> {
            type Slots = Slot<'p, F, <Capacity<$m> as Holds<'p, F>>::Slots>;
        }
    )*};
}
capacity!(2 => 1, 3 => 2, 4 => 3, 5 => 4, 6 => 5, 7 => 6, 8 => 7);

/// What a hedged call runs for each attempt: a closure `Fn() -> Fut`, or,
/// given to [`Hedge::call_with_context`], `Fn(AttemptContext) -> Fut`
/// (wrapped in a [`WithContext`]).
///
/// ```
/// use backoff_runtime::hedge::{HedgeOp, WithContext};
/// use backoff_runtime::{AttemptContext, AttemptKind};
///
/// let plain = || 7;
/// assert_eq!(plain.attempt(AttemptContext::new(1, false)), 7);
/// let told = WithContext(|c: AttemptContext| c.kind);
/// let hedge = AttemptContext::new(2, true).with_kind(AttemptKind::Hedge);
/// assert_eq!(told.attempt(hedge), AttemptKind::Hedge);
/// ```
pub trait HedgeOp<Fut> {
    /// Makes attempt `context.attempt`'s future.
    fn attempt(&self, context: AttemptContext) -> Fut;
}

impl<F: Fn() -> Fut, Fut> HedgeOp<Fut> for F {
    #[inline]
    fn attempt(&self, _: AttemptContext) -> Fut {
        self()
    }
}

/// An operation told each attempt's [`AttemptContext`] (its number, whether
/// it is the last, and whether a hedge started it): see
/// [`Hedge::call_with_context`].
#[derive(Debug, Clone, Copy)]
pub struct WithContext<F>(pub F);

impl<F: Fn(AttemptContext) -> Fut, Fut> HedgeOp<Fut> for WithContext<F> {
    #[inline]
    fn attempt(&self, context: AttemptContext) -> Fut {
        (self.0)(context)
    }
}

/// An `on_retry` hook of a hedged call: closures and functions
/// `FnMut(Option<&Result<T, E>>, &RetryEvent)` (the outcome that started
/// the next attempt, `None` when the hedge delay did; `event.kind` says
/// which), and [`NoHook`].
///
/// ```
/// use backoff_runtime::hedge::OnAttempt;
/// use backoff_runtime::{AttemptKind, RetryEvent};
/// use std::time::Duration;
///
/// let mut hedges = 0;
/// let mut hook = |outcome: Option<&Result<u32, u32>>, event: &RetryEvent| {
///     if event.kind == AttemptKind::Hedge {
///         assert!(outcome.is_none());
///         hedges += 1;
///     }
/// };
/// let event = RetryEvent::new(1, Duration::from_millis(20), Duration::ZERO);
/// hook.on_attempt(None, &event.with_kind(AttemptKind::Hedge));
/// hook.on_attempt(Some(&Err(5)), &event);
/// assert_eq!(hedges, 1);
/// ```
pub trait OnAttempt<T, E> {
    /// Whether there is a hook (the event is built only if so).
    const ON: bool = true;
    /// Called before each attempt after the first starts.
    fn on_attempt(&mut self, outcome: Option<&Result<T, E>>, event: &RetryEvent);
}

impl<T, E, F: FnMut(Option<&Result<T, E>>, &RetryEvent)> OnAttempt<T, E> for F {
    #[inline]
    fn on_attempt(&mut self, outcome: Option<&Result<T, E>>, event: &RetryEvent) {
        self(outcome, event)
    }
}

impl<T, E> OnAttempt<T, E> for NoHook {
    const ON: bool = false;
    #[inline]
    fn on_attempt(&mut self, _: Option<&Result<T, E>>, _: &RetryEvent) {}
}

/// A hedged call, before its operation is given: built by
/// [`Policy::hedge_async`], with the hooks of [`Retrying`](crate::Retrying)
/// (`when`, `when_ok`, `on_retry`, `on_giveup`), a budget and a breaker;
/// [`call`](Hedge::call) gives the operation and makes the future.
///
/// Under a [breaker](Hedge::circuit), dropping the call unfinished counts
/// at most one failure (the attempt running first's, as an unhedged call's
/// cancellation), whatever the attempts in flight; a loser dropped because
/// another attempt won counts nothing.
///
/// ```
/// use backoff_runtime::hedge::HedgeDelay;
/// use backoff_runtime::{AttemptKind, CircuitBreaker, GiveUp, Policy, RetryBudget, RetryEvent};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
///
/// #[derive(Debug, PartialEq)]
/// enum Error { Down, Open }
///
/// static BUDGET: RetryBudget = RetryBudget::new(10, 0.1);
/// static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(10));
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let calls = AtomicU32::new(0);
/// let mut kinds = Vec::new();
/// let mut gave_up = None;
/// let result: Result<u32, Error> = Policy::immediate()
///     .attempts(3)
///     .hedge_async::<3>(HedgeDelay::After(Duration::from_millis(20)))
///     .when(|e: &Error| *e == Error::Down)
///     .budget(&BUDGET)
///     .circuit(&BREAKER, |_| Error::Open)
///     .on_retry(|_: Option<&Result<u32, Error>>, e: &RetryEvent| kinds.push(e.kind))
///     .on_giveup(|_: &Result<u32, Error>, g: &GiveUp| gave_up = Some(g.attempts))
///     .call(|| async {
///         calls.fetch_add(1, Ordering::Relaxed);
///         tokio::time::sleep(Duration::from_millis(50)).await;
///         Err(Error::Down)
///     })
///     .await;
/// assert_eq!(result, Err(Error::Down));
/// assert_eq!(kinds, [AttemptKind::Hedge, AttemptKind::Hedge]);
/// assert_eq!(gave_up, Some(3));
/// assert_eq!(BUDGET.tokens(), 8.0);
/// # }
#[must_use = "a `Hedge` does nothing until you `call` it and await the result"]
pub struct Hedge<
    'p,
    S,
    const N: usize,
    C = NoCircuit,
    W = RetryAll,
    K = AcceptAll,
    R = NoHook,
    G = NoHook,
> {
    policy: &'p Policy<S>,
    delay: HedgeDelay<'p>,
    budget: Option<&'p RetryBudget>,
    circuit: Option<(&'p CircuitBreaker, C)>,
    hooks: HedgeHooks<W, K, R, G>,
}

/// How a breaker's refusal becomes a hedged call's error: the
/// `fn(CircuitOpen) -> E` given to [`Hedge::circuit`], or [`NoCircuit`].
///
/// ```
/// use backoff_runtime::CircuitOpen;
/// use backoff_runtime::hedge::Refuse;
///
/// let from: fn(CircuitOpen) -> &'static str = |_| "open";
/// assert_eq!(from.refuse(CircuitOpen::new()), "open");
/// ```
pub trait Refuse<E> {
    /// The call's error for a refusal.
    fn refuse(&self, open: CircuitOpen) -> E;
}

impl<E> Refuse<E> for fn(CircuitOpen) -> E {
    fn refuse(&self, open: CircuitOpen) -> E {
        self(open)
    }
}

/// No breaker (a [`Hedge`] before [`circuit`](Hedge::circuit)): never
/// refuses, it has no value.
///
/// ```
/// use backoff_runtime::hedge::{Hedge, NoCircuit};
/// use backoff_runtime::Policy;
/// use std::time::Duration;
///
/// let policy = Policy::immediate().attempts(2);
/// let _: Hedge<'_, _, 2, NoCircuit> =
///     policy.hedge_async::<2>(backoff_runtime::hedge::HedgeDelay::After(Duration::ZERO));
/// ```
#[derive(Debug, Clone, Copy)]
pub enum NoCircuit {}

impl<E> Refuse<E> for NoCircuit {
    fn refuse(&self, _: CircuitOpen) -> E {
        match *self {}
    }
}

/// A hedged call's hooks (`when`, `when_ok`, `on_retry`, `on_giveup`), as
/// its [`Hedge`] was given them. You never name it: it is a type
/// parameter of [`Hedged`] (see [`Hedge`]'s example for every hook).
#[derive(Debug)]
pub struct HedgeHooks<W, K, R, G> {
    when: W,
    when_ok: K,
    on_retry: R,
    on_giveup: Option<G>,
}

impl<T, E, W, K, R, G> Hooks<T, E> for HedgeHooks<W, K, R, G>
where
    W: Classify<E>,
    K: Classify<T>,
    R: OnAttempt<T, E>,
    G: OnGiveUp<T, E>,
{
    const ON_RETRY: bool = R::ON;
    const REPORTS: bool = G::TIMED;

    #[inline]
    fn when(&mut self, error: &E) -> Decision {
        self.when.classify(error)
    }

    #[inline]
    fn when_ok(&mut self, value: &T) -> Decision {
        self.when_ok.classify(value)
    }

    #[inline]
    fn on_retry(&mut self, outcome: &Result<T, E>, event: &RetryEvent) {
        self.on_retry.on_attempt(Some(outcome), event);
    }

    #[inline]
    fn on_hedge(&mut self, event: &RetryEvent) {
        self.on_retry.on_attempt(None, event);
    }

    #[inline]
    fn on_give_up(&mut self, outcome: &Result<T, E>, report: &GiveUp) {
        if let Some(hook) = self.on_giveup.take() {
            hook.on_giveup(outcome, report);
        }
    }
}

impl<S> Policy<S> {
    /// A hedged call under this policy, holding `N` attempts (at most
    /// [`MAX_ATTEMPTS`]), hedging after `delay`; see the [module](crate::hedge)
    /// for the rule. Add hooks, a budget or a breaker, then give the
    /// operation to [`call`](Hedge::call).
    ///
    /// The policy's attempt limit bounds the attempts started: give
    /// `attempts(N)` (the attribute passes the same literal to both).
    ///
    /// # Panics
    ///
    /// If the policy's attempts are unlimited or above `N` (the call could
    /// not hold them), or `delay` is a [`HedgeDelay::Quantile`] outside
    /// `(0, 1)` or NaN.
    ///
    /// ```
    /// use backoff_runtime::hedge::{HedgeDelay, Latency};
    /// use backoff_runtime::{Decision, Policy};
    ///
    /// static LATENCY: Latency = Latency::new();
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let result: Result<u32, String> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::P95(&LATENCY))
    ///     .when(|e: &String| if e == "bad request" { Decision::Stop } else { Decision::Retry })
    ///     .call(|| async { Err("bad request".to_string()) })
    ///     .await;
    /// assert_eq!(result.unwrap_err(), "bad request"); // `Stop`: one attempt
    /// # }
    /// ```
    #[track_caller]
    pub fn hedge_async<'p, const N: usize>(&'p self, delay: HedgeDelay<'p>) -> Hedge<'p, S, N> {
        const {
            assert!(
                N >= 1 && N <= MAX_ATTEMPTS,
                "a hedged call holds 1 to 8 attempts"
            )
        };
        match self.attempt_limit() {
            Some(limit) => assert!(
                limit as usize <= N,
                "the policy allows {limit} attempts but the hedged call holds {N}"
            ),
            None => panic!("a hedged call needs an attempt limit, at most {N}"),
        }
        if let HedgeDelay::Quantile(_, q) = delay {
            assert!(q > 0.0 && q < 1.0, "a hedge quantile is in (0, 1), not {q}");
        }
        Hedge {
            policy: self,
            delay,
            budget: None,
            circuit: None,
            hooks: HedgeHooks {
                when: RetryAll,
                when_ok: AcceptAll,
                on_retry: NoHook,
                on_giveup: Some(NoHook),
            },
        }
    }
}

/// What [`Hedge::call`] and [`Hedge::call_with_context`] return: the
/// hedged call's future, with this builder's hooks and `N` slots of `Fut`.
type HedgedCall<'p, S, const N: usize, Op, Fut, T, E, C, W, K, R, G> =
    Hedged<'p, S, Op, Fut, T, E, C, HedgeHooks<W, K, R, G>, <Capacity<N> as Holds<'p, Fut>>::Slots>;

impl<'p, S, const N: usize, C, W, K, R, G> Hedge<'p, S, N, C, W, K, R, G> {
    /// The same hedged call with its hooks (`when`, `when_ok`, `on_retry`,
    /// `on_giveup`) mapped by `f`: what each hook's method changes, the
    /// rest kept.
    #[inline]
    fn with_hooks<W2, K2, R2, G2>(
        self,
        f: impl FnOnce((W, K, R, Option<G>)) -> (W2, K2, R2, Option<G2>),
    ) -> Hedge<'p, S, N, C, W2, K2, R2, G2> {
        let HedgeHooks {
            when,
            when_ok,
            on_retry,
            on_giveup,
        } = self.hooks;
        let (when, when_ok, on_retry, on_giveup) = f((when, when_ok, on_retry, on_giveup));
        Hedge {
            policy: self.policy,
            delay: self.delay,
            budget: self.budget,
            circuit: self.circuit,
            hooks: HedgeHooks {
                when,
                when_ok,
                on_retry,
                on_giveup,
            },
        }
    }

    /// Which errors to retry (and hedge after at once): `bool` or
    /// [`Decision`]; [`Decision::Stop`] ends the call at once.
    ///
    /// ```
    /// use backoff_runtime::hedge::HedgeDelay;
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let result: Result<(), u16> = Policy::immediate()
    ///     .attempts(3)
    ///     .hedge_async::<3>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .when(|status: &u16| *status >= 500) // a 404 stops at once
    ///     .call(|| async { Err(404) })
    ///     .await;
    /// assert_eq!(result, Err(404));
    /// # }
    /// ```
    pub fn when<F>(self, when: F) -> Hedge<'p, S, N, C, F, K, R, G> {
        self.with_hooks(|(_, k, r, g)| (when, k, r, g))
    }

    /// Which `Ok` values to treat like errors (see
    /// [`Retrying::when_ok`](crate::Retrying::when_ok)).
    ///
    /// ```
    /// use backoff_runtime::hedge::HedgeDelay;
    /// use backoff_runtime::Policy;
    /// use std::sync::atomic::{AtomicU16, Ordering};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let status = AtomicU16::new(503);
    /// let result: Result<u16, ()> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .when_ok(|s: &u16| *s == 503)
    ///     .call(|| async { Ok(status.swap(200, Ordering::Relaxed)) })
    ///     .await;
    /// assert_eq!(result, Ok(200)); // the 503 started the next attempt at once
    /// # }
    /// ```
    pub fn when_ok<F>(self, when_ok: F) -> Hedge<'p, S, N, C, W, F, R, G> {
        self.with_hooks(|(w, _, r, g)| (w, when_ok, r, g))
    }

    /// Called before each attempt after the first starts (see
    /// [`OnAttempt`]).
    ///
    /// ```
    /// use backoff_runtime::hedge::HedgeDelay;
    /// use backoff_runtime::{AttemptKind, Policy, RetryEvent};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let mut seen = Vec::new();
    /// let result: Result<u32, ()> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .on_retry(|outcome: Option<&Result<u32, ()>>, e: &RetryEvent| {
    ///         seen.push((outcome.is_none(), e.kind, e.delay))
    ///     })
    ///     .call(|| async {
    ///         tokio::time::sleep(Duration::from_millis(30)).await;
    ///         Ok(1)
    ///     })
    ///     .await;
    /// assert_eq!(result, Ok(1));
    /// assert_eq!(seen, [(true, AttemptKind::Hedge, Duration::from_millis(20))]);
    /// # }
    /// ```
    pub fn on_retry<F>(self, on_retry: F) -> Hedge<'p, S, N, C, W, K, F, G> {
        self.with_hooks(|(w, k, _, g)| (w, k, on_retry, g))
    }

    /// Called once when the call gives up, with the outcome returned and
    /// the report ([`GiveUp::hedges`] counts the hedges).
    ///
    /// ```
    /// use backoff_runtime::hedge::HedgeDelay;
    /// use backoff_runtime::{GiveUp, GiveUpReason, Policy};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let mut report = None;
    /// let result: Result<(), &str> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .on_giveup(|_: &Result<(), &str>, g: &GiveUp| report = Some((g.attempts, g.reason)))
    ///     .call(|| async { Err("down") })
    ///     .await;
    /// assert_eq!(result, Err("down"));
    /// assert_eq!(report, Some((2, GiveUpReason::Attempts)));
    /// # }
    /// ```
    pub fn on_giveup<F>(self, on_giveup: F) -> Hedge<'p, S, N, C, W, K, R, F> {
        self.with_hooks(|(w, k, r, _)| (w, k, r, Some(on_giveup)))
    }

    /// Shares a retry budget: each attempt after the first spends a token
    /// (with none left, no other starts), each success deposits.
    ///
    /// ```
    /// use backoff_runtime::hedge::HedgeDelay;
    /// use backoff_runtime::{Policy, RetryBudget};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let budget = RetryBudget::new(0, 0.0); // empty: never hedge
    /// let result: Result<u32, ()> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .budget(&budget)
    ///     .call(|| async {
    ///         tokio::time::sleep(Duration::from_secs(1)).await;
    ///         Ok(1)
    ///     })
    ///     .await;
    /// assert_eq!(result, Ok(1));
    /// # }
    /// ```
    pub fn budget(mut self, budget: &'p (impl Budget + ?Sized)) -> Self {
        self.budget = Some(budget.as_budget());
        self
    }

    /// Puts every attempt behind a breaker (any [`Circuit`]: a
    /// [`CircuitBreaker`], or a fleet's shared one): an open breaker refuses the
    /// first attempt (the call returns `from(CircuitOpen)`) and every
    /// hedge; each attempt's outcome is reported to it. A loser dropped
    /// because another attempt won counts as nothing; a call its caller
    /// drops counts at most one failure (for the attempt running first,
    /// as an unhedged call's cancellation), never one per attempt in
    /// flight: see the [module](crate::hedge).
    ///
    /// ```
    /// use backoff_runtime::hedge::HedgeDelay;
    /// use backoff_runtime::{CircuitBreaker, Policy};
    /// use std::time::{Duration, Instant};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let breaker = CircuitBreaker::new(1, 1, Duration::from_secs(60));
    /// breaker.acquire(Instant::now()).unwrap().failure(Instant::now()); // open
    /// let result: Result<u32, &str> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .circuit(&breaker, |_| "circuit open")
    ///     .call(|| async { Ok(1) })
    ///     .await;
    /// assert_eq!(result, Err("circuit open"));
    /// # }
    /// ```
    pub fn circuit<E>(
        self,
        breaker: &'p (impl Circuit + ?Sized),
        from: fn(CircuitOpen) -> E,
    ) -> Hedge<'p, S, N, FromOpen<E>, W, K, R, G> {
        Hedge {
            policy: self.policy,
            delay: self.delay,
            budget: self.budget,
            circuit: Some((breaker.as_circuit(), from)),
            hooks: self.hooks,
        }
    }

    /// [`call`](Hedge::call) with an operation that is told each attempt's
    /// [`AttemptContext`]: its number, whether it is the last, and its
    /// [`AttemptKind`] (a hedge, or a retry after a failure).
    ///
    /// ```
    /// use backoff_runtime::hedge::HedgeDelay;
    /// use backoff_runtime::{AttemptContext, AttemptKind, Policy};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let result: Result<AttemptKind, ()> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .call_with_context(|c: AttemptContext| async move {
    ///         // The first attempt hangs; the hedge answers.
    ///         if c.attempt == 1 {
    ///             std::future::pending::<()>().await;
    ///         }
    ///         Ok(c.kind)
    ///     })
    ///     .await;
    /// assert_eq!(result, Ok(AttemptKind::Hedge));
    /// # }
    /// ```
    #[allow(clippy::type_complexity)] // (the `Hedged` of `call`)
    pub fn call_with_context<T, E, Op, Fut>(
        self,
        op: Op,
    ) -> HedgedCall<'p, S, N, WithContext<Op>, Fut, T, E, C, W, K, R, G>
    where
        C: Refuse<E>,
        S: Strategy,
        Op: Fn(AttemptContext) -> Fut,
        Fut: Future<Output = Result<T, E>>,
        Capacity<N>: Holds<'p, Fut>,
        W: Classify<E>,
        K: Classify<T>,
        R: OnAttempt<T, E>,
        G: OnGiveUp<T, E>,
    {
        self.hedged(WithContext(op))
    }

    /// The hedged call of `op`, which makes one attempt's future each time
    /// it is called (it must be runnable several times at once, so it is
    /// `Fn`, and its futures may borrow what it borrows, not itself).
    ///
    /// ```
    /// use backoff_runtime::hedge::HedgeDelay;
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// fn assert_send<F: Send>(f: F) -> F { f }
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// static POLICY: Policy = Policy::immediate().attempts(2);
    /// let key = String::from("k1");
    /// let future = POLICY
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .call(|| async { Ok::<usize, ()>(key.len()) }); // borrows `key`
    /// assert_eq!(assert_send(future).await, Ok(2));
    /// # }
    /// ```
    pub fn call<T, E, Op, Fut>(self, op: Op) -> HedgedCall<'p, S, N, Op, Fut, T, E, C, W, K, R, G>
    where
        C: Refuse<E>,
        S: Strategy,
        Op: Fn() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        Capacity<N>: Holds<'p, Fut>,
        W: Classify<E>,
        K: Classify<T>,
        R: OnAttempt<T, E>,
        G: OnGiveUp<T, E>,
    {
        self.hedged(op)
    }

    /// The future of a call of `op` (either kind of operation).
    #[allow(clippy::type_complexity)] // (the `Hedged` of `call`)
    fn hedged<T, E, Op, Fut>(self, op: Op) -> HedgedCall<'p, S, N, Op, Fut, T, E, C, W, K, R, G>
    where
        C: Refuse<E>,
        S: Strategy,
        Op: HedgeOp<Fut>,
        Fut: Future<Output = Result<T, E>>,
        Capacity<N>: Holds<'p, Fut>,
        W: Classify<E>,
        K: Classify<T>,
        R: OnAttempt<T, E>,
        G: OnGiveUp<T, E>,
    {
        let clock = clock::for_async();
        let timed = R::ON || G::TIMED;
        let start = Origin::at(
            self.policy,
            clock,
            driver::began(self.policy, clock, timed),
            self.budget,
        )
        .with_circuit(self.circuit.as_ref().map(|(c, _)| *c));
        // (Begun before the future is built: read in the literal, its branch
        // made the compiler build the 200-byte state aside and copy it in.)
        let recording = Recording::begin(self.policy.function(), clock);
        Hedged {
            slots: <<Capacity<N> as Holds<'p, Fut>>::Slots as Slots<'p, Fut>>::empty(),
            timer: None,
            trace: NoTrace,
            call: Call {
                op,
                start,
                state: None,
                hooks: self.hooks,
                recording,
                delay: self.delay,
                hedge_after: Duration::ZERO,
                refused: self.circuit.map(|(_, from)| from),
                limit: <<Capacity<N> as Holds<'p, Fut>>::Slots as Slots<'p, Fut>>::LEN,
                started: 0,
                in_flight: 0,
                hedges: 0,
                armed: false,
                arm: false,
                done: false,
                outcome: PhantomData,
            },
        }
    }
}

pin_project! {
    /// A hedged call's future: see the [module](crate::hedge). Built by
    /// [`Hedge::call`]; it holds its attempts' futures in `L`, `N` slots.
    /// Dropping it drops every attempt in flight.
    ///
    /// ```
    /// use backoff_runtime::hedge::HedgeDelay;
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let policy = Policy::immediate().attempts(2);
    /// let call = policy
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .call(|| std::future::pending::<Result<(), ()>>());
    /// // Both attempts are cancelled with the call.
    /// assert!(tokio::time::timeout(Duration::from_secs(1), call).await.is_err());
    /// # }
    /// ```
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Hedged<'p, S, Op, Fut, T, E, C, H, L, Tr = NoTrace> {
        #[pin]
        slots: L,
        #[pin]
        timer: Option<tokio::time::Sleep>,
        call: Call<'p, S, Op, Fut, T, E, C, H>,
        trace: Tr,
    }
}

/// The types a [`Call`] names without holding.
type Marker<Fut, T, E> = PhantomData<fn() -> (Fut, Result<T, E>)>;

/// How [`Hedge::circuit`] makes a refusal the call's error.
type FromOpen<E> = fn(CircuitOpen) -> E;

/// What a hedged call keeps besides its pinned attempts and timer.
struct Call<'p, S, Op, Fut, T, E, C, H> {
    op: Op,
    start: Origin<'p, S>,
    state: Option<RetryState<'p, S>>,
    hooks: H,
    recording: Recording,
    delay: HedgeDelay<'p>,
    /// The delay read when the call began.
    hedge_after: Duration,
    refused: Option<C>,
    /// Slots: no more attempts than these start.
    limit: u32,
    started: u32,
    in_flight: u32,
    hedges: u32,
    /// Whether the timer runs for the next hedge.
    armed: bool,
    /// Whether it is to be started when the attempts next wait.
    arm: bool,
    done: bool,
    outcome: Marker<Fut, T, E>,
}

impl<'p, S: Strategy, Op, Fut, T, E, C, H> Call<'p, S, Op, Fut, T, E, C, H>
where
    C: Refuse<E>,
    Op: HedgeOp<Fut>,
    Fut: Future<Output = Result<T, E>>,
    H: Hooks<T, E>,
{
    /// Whether the call needs each attempt's start time.
    fn timed(&self) -> bool {
        self.recording.is_live()
            || matches!(self.delay, HedgeDelay::P95(_) | HedgeDelay::Quantile(..))
    }

    /// Starts attempt `started + 1` of kind `kind` in its slot, with a
    /// permit from the breaker, if any: `Err(open)` if it refused.
    fn start<L: Slots<'p, Fut>>(
        &mut self,
        slots: Pin<&mut L>,
        kind: AttemptKind,
    ) -> Result<(), CircuitOpen> {
        let mut permit = None;
        if self.refused.is_some() {
            let state = self.state.get_or_insert_with(|| self.start.state());
            state.before_attempt()?;
            permit = state.take_permit();
        }
        let began = if self.timed() {
            Some((self.start.clock)())
        } else {
            None
        };
        let learn = match self.delay {
            HedgeDelay::P95(latency) | HedgeDelay::Quantile(latency, _) => Some(latency),
            HedgeDelay::After(_) => None,
        };
        let meta = Meta {
            kind,
            number: self.started.saturating_add(1),
            began,
            permit,
            quiet: self.in_flight > 0,
            learn,
        };
        let context =
            AttemptContext::of(self.start.policy, self.started.saturating_add(1)).with_kind(kind);
        slots.start(self.started, self.op.attempt(context), meta);
        self.started += 1;
        self.in_flight += 1;
        if kind == AttemptKind::Hedge {
            self.hedges += 1;
        }
        Ok(())
    }

    /// The call gives up: the breaker refused its next attempt (its first,
    /// or a retry with none in flight).
    fn refused(&mut self, open: CircuitOpen, trace: &impl Trace<E>) -> Result<T, E> {
        let error = match &self.refused {
            Some(from) => from.refuse(open),
            None => unreachable!("refused without a breaker"),
        };
        let progress = Lazy {
            slot: &mut self.state,
            start: &self.start,
        };
        let mut recording = HedgedRecording {
            recording: &mut self.recording,
            kind: AttemptKind::Original,
            number: 0,
            began: None,
            started: self.started,
        };
        driver::give_up(
            &progress,
            Err(error),
            &mut self.hooks,
            trace,
            &mut recording,
            None,
        )
    }
}

impl<'p, S, Op, Fut, T, E, C, H, L> Hedged<'p, S, Op, Fut, T, E, C, H, L> {
    #[doc(hidden)]
    /// The same call, reporting its retries and its giving up to `trace`
    /// (the attribute's `tracing` events).
    pub fn traced<Tr: Trace<E>>(self, trace: Tr) -> Hedged<'p, S, Op, Fut, T, E, C, H, L, Tr> {
        Hedged {
            slots: self.slots,
            timer: self.timer,
            call: self.call,
            trace,
        }
    }
}

impl<'p, S, Op, Fut, T, E, C, H, L, Tr> Future for Hedged<'p, S, Op, Fut, T, E, C, H, L, Tr>
where
    Tr: Trace<E>,
    C: Refuse<E>,
    S: Strategy,
    Op: HedgeOp<Fut>,
    Fut: Future<Output = Result<T, E>>,
    H: Hooks<T, E>,
    L: Slots<'p, Fut>,
{
    type Output = Result<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let this = self.project();
        let call = this.call;
        let trace = &*this.trace;
        let mut slots = this.slots;
        let mut timer = this.timer;
        assert!(!call.done, "`Hedged` polled after it completed");
        if call.started == 0 {
            call.hedge_after = call.delay.get();
            if let Err(open) = call.start(slots.as_mut(), AttemptKind::Original) {
                call.done = true;
                return Poll::Ready(call.refused(open, trace));
            }
            call.rearm();
        }
        loop {
            if call.armed
                && let Some(sleep) = timer.as_mut().as_pin_mut()
                && sleep.poll(cx).is_ready()
            {
                call.armed = false;
                let granted = {
                    let mut progress = Lazy {
                        slot: &mut call.state,
                        start: &call.start,
                    };
                    driver::hedge_now::<T, E, H>(&mut progress, call.hedge_after, &mut call.hooks)
                };
                if granted && call.start(slots.as_mut(), AttemptKind::Hedge).is_ok() {
                    call.rearm();
                }
                continue;
            }
            let Poll::Ready((outcome, mut meta)) = slots.as_mut().poll_any(cx) else {
                if call.arm {
                    // The attempts wait: the timer starts now, in the poll
                    // that started the attempt (so an attempt that is ready
                    // at once never builds it).
                    call.arm = false;
                    if let Some(at) = tokio::time::Instant::now().checked_add(call.hedge_after) {
                        match timer.as_mut().as_pin_mut() {
                            Some(sleep) => sleep.reset(at),
                            None => timer.set(Some(tokio::time::sleep_until(at))),
                        }
                        call.armed = true;
                        continue;
                    }
                }
                return Poll::Pending;
            };
            call.in_flight -= 1;
            if let (Some(latency), Some(began)) = (meta.learn.take(), meta.began) {
                // An answer after `took`; a failure says only "at least".
                let took = (call.start.clock)().saturating_duration_since(began);
                if outcome.is_ok() {
                    latency.record(took);
                } else {
                    latency.record_at_least(took);
                }
            }
            if let Some(permit) = meta.permit.take() {
                // (Told of the outcome by the state's step or success.)
                let state = call.state.get_or_insert_with(|| call.start.state());
                state.put_permit(Some(permit));
            }
            let mut progress = Lazy {
                slot: &mut call.state,
                start: &call.start,
            };
            let mut recording = HedgedRecording {
                recording: &mut call.recording,
                kind: meta.kind,
                number: meta.number,
                began: meta.began,
                started: call.started,
            };
            match driver::after_hedged_attempt(
                &mut progress,
                outcome,
                HedgeCount {
                    in_flight: call.in_flight > 0,
                    room: call.started < call.limit,
                    started: call.started,
                    hedges: call.hedges,
                },
                &mut call.hooks,
                trace,
                &mut recording,
            ) {
                Hedging::Done(outcome) => {
                    call.done = true;
                    // The losers are dropped now, not with the future.
                    slots.as_mut().cancel_all();
                    timer.set(None);
                    return Poll::Ready(outcome);
                }
                Hedging::Next => match call.start(slots.as_mut(), AttemptKind::Retry) {
                    Ok(()) => call.rearm(),
                    Err(open) if call.in_flight == 0 => {
                        // The breaker refused the retry at the last moment
                        // (the state had admitted it): the call ends.
                        call.done = true;
                        timer.set(None);
                        return Poll::Ready(call.refused(open, trace));
                    }
                    Err(_) => call.disarm(),
                },
                Hedging::Wait => call.disarm(),
            }
        }
    }
}

impl<'p, S, Op, Fut, T, E, C, H> Call<'p, S, Op, Fut, T, E, C, H> {
    /// After an attempt started: the timer is to run for the next hedge
    /// (from when the attempts next wait, in this poll), if one may start.
    fn rearm(&mut self)
    where
        S: Strategy,
    {
        self.armed = false;
        self.arm =
            self.started < self.limit && !self.state.as_ref().is_some_and(RetryState::is_done);
    }

    /// No other hedge may start.
    fn disarm(&mut self) {
        self.armed = false;
        self.arm = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn buckets_are_log_spaced_by_root_two_from_the_floor() {
        assert_eq!(Latency::edge(0), MS(1));
        assert_eq!(Latency::edge(1), Duration::from_nanos(1_414_213));
        assert_eq!(Latency::edge(2), MS(2));
        assert_eq!(Latency::edge(7), Duration::from_nanos(11_313_708));
        assert_eq!(Latency::edge(20), MS(1024));
        assert_eq!(Latency::bucket(Duration::ZERO), 0);
        assert_eq!(Latency::bucket(Duration::from_micros(999)), 0);
        assert_eq!(Latency::bucket(MS(1)), 1);
        assert_eq!(Latency::bucket(MS(10)), 7);
        assert_eq!(Latency::bucket(MS(1000)), 20);
        assert_eq!(Latency::bucket(Duration::MAX), BUCKETS - 1);
    }

    /// Whether `d` is inside bucket `i` (`[edge(i - 1), edge(i)]`).
    fn in_bucket(d: Duration, i: usize) -> bool {
        Latency::edge(i - 1) <= d && d <= Latency::edge(i)
    }

    #[test]
    fn cold_until_warm_then_inside_the_bucket() {
        let latency = Latency::new();
        for _ in 0..Latency::WARM - 1 {
            latency.record(MS(10));
        }
        assert_eq!(latency.p95(), Latency::DEFAULT);
        latency.record(MS(10));
        assert!(in_bucket(latency.p95(), 7), "{:?}", latency.p95());
    }

    #[test]
    fn percentiles_of_a_heavy_tail() {
        let latency = Latency::new();
        for i in 0..1000 {
            // 98 % at 10 ms, 2 % at a second.
            latency.record(MS(if i % 50 == 0 { 1000 } else { 10 }));
        }
        assert!(in_bucket(latency.quantile(0.5), 7));
        assert!(in_bucket(latency.p95(), 7));
        assert!(in_bucket(latency.quantile(0.98), 7));
        assert!(in_bucket(latency.quantile(0.99), 20));
        assert_eq!(latency.quantile(1.0), MS(1024));
        assert_eq!(latency.quantile(2.0), MS(1024));
        assert!(in_bucket(latency.quantile(-1.0), 7));
        assert!(latency.quantile(0.5) < latency.p95());
    }

    #[test]
    #[should_panic(expected = "NaN")]
    fn a_nan_quantile_panics() {
        let _ = Latency::new().quantile(f64::NAN);
    }

    #[test]
    fn censored_samples_keep_the_tail() {
        // The true latency: 90 % at 10 ms, 10 % at a second. The slow ones
        // lose to a hedge and are dropped after 30 ms: only "at least".
        let winners = Latency::new();
        let every = Latency::new();
        for i in 0..1000 {
            if i % 10 == 0 {
                every.record_at_least(MS(30));
                winners.record(MS(20)); // the hedge that won
            } else {
                every.record(MS(10));
                winners.record(MS(10));
            }
        }
        // The winners say p95 is 20 ms; the truth is "over 30 ms".
        assert!(winners.p95() < MS(23));
        assert!(
            every.p95() >= Duration::from_nanos(22_627_417),
            "{:?}",
            every.p95()
        );
        // p50 is unmoved.
        assert!(in_bucket(every.quantile(0.5), 7));
    }

    #[test]
    fn a_censored_sample_below_the_quantile_changes_little() {
        let latency = Latency::new();
        for _ in 0..500 {
            latency.record(MS(10));
            latency.record(MS(100));
            latency.record_at_least(MS(2));
        }
        // Half the answers are 10 ms, half 100 ms: the median sits between.
        let p50 = latency.quantile(0.5);
        assert!(p50 > MS(8) && p50 <= MS(91), "{p50:?}");
        assert!(in_bucket(latency.quantile(0.9), 14));
    }

    #[test]
    fn never_under_the_floor() {
        let latency = Latency::new();
        for _ in 0..100 {
            latency.record(Duration::from_micros(10));
        }
        assert_eq!(latency.p95(), Latency::FLOOR);
    }

    #[test]
    fn a_window_of_samples_halves_every_bucket() {
        let latency = Latency::new();
        for _ in 0..Latency::WINDOW - 1 {
            latency.record(MS(10));
        }
        latency.record_at_least(MS(10));
        // Halved: 511.5 answered and 0.5 censored at 10 ms.
        assert_eq!(latency.answered[7].load(Ordering::Relaxed), 1023 * UNIT / 2);
        assert_eq!(latency.censored[7].load(Ordering::Relaxed), UNIT / 2);
        assert_eq!(latency.samples(), 1024);
        for _ in 0..500 {
            latency.record(MS(100));
        }
        // The median is still among the 10 ms ones.
        assert!(in_bucket(latency.quantile(0.5), 7));
        for _ in 0..100 {
            latency.record(MS(100));
        }
        // 600 at 100 ms against 512: the median has moved to them.
        assert!(in_bucket(latency.quantile(0.5), 14));
        assert_eq!(latency.answered[14].load(Ordering::Relaxed), 600 * UNIT);
    }
}
