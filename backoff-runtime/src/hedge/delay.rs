//! The hedge delay: fixed, or a latency quantile learned as calls run
//! ([`HedgeDelay`], [`Latency`]).

use super::*;

/// How long a hedged call waits for an attempt before starting the next.
///
/// ```
/// use backoff_runtime::{HedgeDelay, Latency};
/// use std::time::Duration;
///
/// static LATENCY: Latency = Latency::new();
/// let fixed = HedgeDelay::After(Duration::from_millis(20));
/// let learned = HedgeDelay::P95(&LATENCY);
/// assert!(matches!(fixed, HedgeDelay::After(d) if d == Duration::from_millis(20)));
/// // What `learned` hedges after, cold (no samples yet):
/// assert_eq!(LATENCY.quantile(0.95), Duration::from_millis(100));
/// # let _ = learned;
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum HedgeDelay<'a> {
    /// A fixed delay (`hedge = "20ms"`).
    After(Duration),
    /// The 95th percentile of every attempt's latency, learned
    /// (`hedge = "p95"`): read when the call is made; each attempt's latency
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
    /// use backoff_runtime::{HedgeDelay, Latency};
    ///
    /// static LATENCY: Latency = Latency::new();
    /// const P99: HedgeDelay<'static> = HedgeDelay::quantile(&LATENCY, 0.99);
    /// assert!(matches!(P99, HedgeDelay::Quantile(_, q) if q == 0.99));
    /// ```
    ///
    /// ```should_panic
    /// use backoff_runtime::{HedgeDelay, Latency};
    ///
    /// let latency = Latency::new();
    /// let _ = HedgeDelay::quantile(&latency, f64::NAN); // panics
    /// ```
    ///
    /// ```compile_fail
    /// use backoff_runtime::{HedgeDelay, Latency};
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
}

/// Number of buckets of a [`Latency`].
pub(super) const BUCKETS: usize = 40;

/// A sample's weight in a bucket (fixed point, so that halving keeps the
/// rare tail samples for many windows instead of rounding them to zero).
pub(super) const UNIT: u32 = 256;

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
/// a floor of 1 ms ( bucket 0 holds everything under it)
/// up to about 12 minutes (the last bucket holds the rest). A quantile is
/// interpolated geometrically inside its bucket, and is never under the
/// floor. A censored sample counts as at risk for half of its own bucket
/// (the actuarial convention).
///
/// Until 20 samples have been recorded, the estimate is 100 ms (a cold
/// start hedges after 100 ms).
///
/// It follows change by decay: every 1,024 samples (a window) each bucket
/// is halved, so a sample's weight halves with every window of samples
/// recorded after it and a shifted latency moves the estimate
/// within about two windows. (Concurrent records during a halving may be
/// counted before or after it: an estimate, not a ledger.)
///
/// The learned delay is readable at any time, from any thread:
///
/// ```
/// use backoff_runtime::Latency;
/// use std::time::Duration;
///
/// static LATENCY: Latency = Latency::new();
/// for i in 0..100u64 {
///     // 95 calls take 10 ms, 5 take a second.
///     LATENCY.record(Duration::from_millis(if i % 20 == 0 { 1000 } else { 10 }));
/// }
/// // Inside the bucket [8 ms, 11.3 ms) of the 10 ms samples.
/// let p95 = LATENCY.quantile(0.95);
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
/// use backoff_runtime::Latency;
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
/// assert!(latency.quantile(0.95) >= Duration::from_millis(45));
/// ```
#[derive(Debug)]
pub struct Latency {
    /// Attempts that answered, by bucket (`UNIT` each, decayed).
    pub(super) answered: [AtomicU32; BUCKETS],
    /// Attempts dropped (or failed) while in the bucket: at least that.
    pub(super) censored: [AtomicU32; BUCKETS],
    /// Samples since the last halving.
    pub(super) window: AtomicU32,
    /// Samples ever recorded (saturating), for the cold start.
    pub(super) seen: AtomicU64,
}

impl Default for Latency {
    fn default() -> Self {
        Self::new()
    }
}

impl Latency {
    /// The shortest estimate, and the first bucket's upper edge: 1 ms.
    pub(crate) const FLOOR: Duration = Duration::from_millis(1);
    /// The estimate before `WARM` samples: 100 ms.
    pub(crate) const DEFAULT: Duration = Duration::from_millis(100);
    /// Samples (answered or censored) before the estimate is learned: 20.
    pub(crate) const WARM: u64 = 20;
    /// Samples between two halvings of every bucket: 1,024.
    pub(crate) const WINDOW: u32 = 1024;

    /// An empty estimate.
    ///
    /// ```
    /// use backoff_runtime::Latency;
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
    pub(super) fn bucket(latency: Duration) -> usize {
        (0..BUCKETS - 1)
            .find(|&i| latency < Self::edge(i))
            .unwrap_or(BUCKETS - 1)
    }

    /// The upper edge of bucket `i`: `FLOOR·2^(i/2)` (√2 steps, the odd
    /// ones rounded to the nanosecond).
    pub(super) fn edge(i: usize) -> Duration {
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
    /// use backoff_runtime::Latency;
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
    /// use backoff_runtime::Latency;
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
    #[doc(hidden)]
    pub fn record_at_least(&self, ran: Duration) {
        self.add(&self.censored, ran);
    }

    pub(super) fn add(&self, buckets: &[AtomicU32; BUCKETS], latency: Duration) {
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
    /// use backoff_runtime::Latency;
    /// use std::time::Duration;
    ///
    /// let latency = Latency::new();
    /// for _ in 0..3 {
    ///     latency.record(Duration::from_millis(5));
    /// }
    /// assert_eq!(latency.samples(), 3);
    /// ```
    #[doc(hidden)]
    pub fn samples(&self) -> u64 {
        self.seen.load(Ordering::Relaxed)
    }

    /// The `q` quantile of the recent latencies, the learned delay that
    /// `HedgeDelay::Quantile(&latency, q)` hedges after (readable at any
    /// time): where the Kaplan–Meier survival of the answered and censored
    /// samples falls to `1 − q`, interpolated inside its bucket, at least
    /// 1 ms; 100 ms while cold (fewer than 20 samples). When the survival never falls that far (the slowest samples
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
    /// use backoff_runtime::Latency;
    /// use std::time::Duration;
    ///
    /// let latency = Latency::new();
    /// for _ in 0..50 {
    ///     latency.record(Duration::from_micros(100)); // under the floor
    /// }
    /// assert_eq!(latency.quantile(0.5), Duration::from_millis(1));
    /// ```
    ///
    /// The 95th percentile (what `HedgeDelay::P95(&latency)` hedges after):
    ///
    /// ```
    /// use backoff_runtime::Latency;
    /// use std::time::Duration;
    ///
    /// let latency = Latency::new();
    /// for ms in 1..=100 {
    ///     latency.record(Duration::from_millis(ms));
    /// }
    /// // The 95th sample, 95 ms, is in the bucket [90.5 ms, 128 ms), with
    /// // 91..=100 ms: half of them are above p95, which is interpolated
    /// // halfway (geometrically) into the bucket.
    /// assert_eq!(latency.quantile(0.95).as_millis(), 107);
    /// ```
    pub fn quantile(&self, q: f64) -> Duration {
        assert!(!q.is_nan(), "a latency quantile must be a number, not NaN");
        if self.samples() < Self::WARM {
            return Self::DEFAULT;
        }
        let load = |b: &[AtomicU32; BUCKETS]| -> [f64; BUCKETS] {
            core::array::from_fn(|i| f64::from(b[i].load(Ordering::Relaxed)))
        };
        let (answered, censored) = (load(&self.answered), load(&self.censored));
        let mut at_risk: f64 = answered.iter().chain(&censored).sum();
        if at_risk == 0.0 {
            return Self::DEFAULT;
        }
        let target = 1.0 - q.clamp(0.0, 1.0);
        // The survival at the lower edge of the current bucket.
        let mut survival = 1.0f64;
        let mut slowest = 0;
        for i in 0..BUCKETS {
            let (d, c) = (answered[i], censored[i]);
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
}
