//! Jitter: randomness added to a delay so that clients that failed together
//! do not retry together.
//!
//! Jitter applies to the strategy's capped delay `v`, and its result is capped
//! again, so no jittered sleep ever exceeds the strategy's maximum:
//!
//! | jitter | sleep |
//! |---|---|
//! | [`Jitter::None`] | `v` |
//! | [`Jitter::Full`] | uniform(0, v) |
//! | [`Jitter::Equal`] | v/2 + uniform(0, v/2) |
//! | [`Jitter::Scattered(r)`](Jitter::Scattered) | uniform(v·(1−r), v·(1+r)), at most `max` |
//! | [`Jitter::Range(lo, hi)`](Jitter::Range) | uniform(v·lo, v·hi), at most `max` |
//! | [`Jitter::Spread`] | the strategy's schedule at the call's phase (see below) |
//!
//! [`Jitter::Spread`] is not a draw per delay: each call draws one phase `p`
//! in `[0, 1)` (at its first retry) and keeps it, and retry `k` waits the
//! strategy's own schedule read at the fractional retry `k − ½ + p`. A herd
//! of calls that failed together then retries evenly over time, with no
//! idle gaps, while each call's waits stay close to the strategy's and
//! never shrink; see [`Policy::delay_for`](crate::Policy::delay_for) for the
//! stateless form a job queue uses.
//!
//! The randomness comes from a [`JitterRng`], a small fast generator
//! (SplitMix64) that is `Send`, lives inside the retry loop and draws only
//! when a jittered delay is drawn, so a call that succeeds at once draws
//! nothing. [`Policy::seed`](crate::Policy::seed) makes a schedule
//! reproducible.

use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;

use rand::distr::uniform::{SampleUniform, UniformSampler};
use rand::{Rng, RngExt, TryRng};

use crate::nanos;

/// How a delay is randomized.
///
/// # Default
///
/// [`Jitter::Full`], the AWS recommendation: it spreads clients the most for
/// the least total waiting.
///
/// # Examples
///
/// ```
/// use backoff_runtime::{Jitter, Policy};
/// use std::time::Duration;
///
/// let policy = Policy::constant(Duration::from_secs(1))
///     .jitter(Jitter::Scattered(0.25))
///     .seed(7);
/// for d in policy.delays() {
///     assert!(d >= Duration::from_millis(750) && d <= Duration::from_millis(1250));
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub enum Jitter {
    /// No randomness: sleep exactly the strategy's delay.
    None,
    /// Uniform between zero and the delay.
    #[default]
    Full,
    /// Half the delay, plus uniform between zero and the other half
    /// (EventSauce's "half jitter").
    Equal,
    /// Uniform within `±r` of the delay, `0 < r ≤ 1`, never above the
    /// strategy's maximum.
    ///
    /// A ratio above 1 is treated as 1; zero, a negative ratio or NaN as no
    /// jitter. [`Jitter::scattered`] checks the ratio instead.
    Scattered(f64),
    /// Multiplicative: uniform between `v·lo` and `v·hi`, never above the
    /// strategy's maximum. [`Full`](Jitter::Full) is `Range(0.0, 1.0)`,
    /// [`Equal`](Jitter::Equal) `Range(0.5, 1.0)`.
    ///
    /// A `lo` below zero or NaN is taken as zero, a `hi` below `lo` (or
    /// NaN) as `lo`, an infinite `hi` as the maximum. [`Jitter::range`]
    /// checks the bounds instead.
    ///
    /// ```
    /// use backoff_runtime::{Jitter, Policy};
    /// use std::time::Duration;
    ///
    /// let policy = Policy::constant(Duration::from_secs(2))
    ///     .max_delay(Duration::from_secs(3))
    ///     .jitter(Jitter::Range(0.5, 2.0))
    ///     .attempts(50);
    /// for d in policy.delays() {
    ///     assert!(d >= Duration::from_secs(1) && d <= Duration::from_secs(3));
    /// }
    /// ```
    Range(f32, f32),
    /// The herd's retries spread evenly over time, each call's waits close
    /// to the strategy's own and never shrinking.
    ///
    /// Each call draws one phase `p`, uniform in `[0, 1)`, at its first
    /// retry (with [`Policy::delay_for`](crate::Policy::delay_for), from the
    /// job's key), and keeps it for every retry. Let `c(k)` be the
    /// strategy's delay of retry `k` without randomness
    /// ([`Strategy::central_delay`](crate::Strategy::central_delay): its
    /// mean for [`Sidekiq`](crate::strategy::Sidekiq) and
    /// [`Buckets`](crate::strategy::Buckets)). The `k`-th retries of calls
    /// that failed together fill one window each, evenly, one window after
    /// the other with no gap and no overlap: window `k` runs from
    /// `A(k) = c(1) + … + c(k − 1) + c(k)/2` to `A(k + 1)`, centred on the
    /// strategy's own time of retry `k`, and a call retries at the fraction
    /// `p` of it. The wait before retry `k` is then `(1 − p)·w(k − 1) +
    /// p·w(k)`, with `w(k) = (c(k) + c(k + 1)) / 2` the width of window `k`:
    /// the strategy's delay read at the fractional retry `k − ½ + p`
    /// (between the midpoints of neighbouring delays), by the same `p` at
    /// every retry.
    ///
    /// On a flat schedule (when `2·c(1) > c(3)`, as for
    /// [`constant`](crate::Policy::constant)) centring would make the first
    /// wait longer than the next, so window `k` starts at `c(1) + … +
    /// c(k − 1)` instead and is `c(k)` wide: the first wait is `p·c(1)`.
    /// Either way the first wait is never longer than the second, no wait
    /// exceeds the strategy's maximum, and on a schedule that never
    /// shrinks, no wait is shorter than the previous one.
    ///
    /// [`decorrelated`](crate::Policy::decorrelated), random by itself,
    /// spreads around its mid-range chain (see
    /// [`Decorrelated`](crate::strategy::Decorrelated)). A jitter applied to
    /// one delay alone, without its schedule, leaves it unchanged.
    ///
    /// ```
    /// use backoff_runtime::{Jitter, Policy};
    /// use std::time::Duration;
    ///
    /// let policy = Policy::linear(Duration::from_secs(10))
    ///     .max_delay(Duration::from_secs(60))
    ///     .jitter(Jitter::Spread)
    ///     .attempts(6);
    /// let waits: Vec<Duration> = policy.delays().collect();
    /// assert_eq!(waits.len(), 5);
    /// assert!(waits.windows(2).all(|w| w[0] <= w[1]));
    /// // Retry k waits between c(k − 1) and c(k + 1).
    /// assert!(waits[2] >= Duration::from_secs(20) && waits[2] <= Duration::from_secs(40));
    /// ```
    Spread,
    /// Your own [`Jitterer`] (a `static`): what it returns for each delay,
    /// never above the strategy's maximum. See [`Policy::jitter_with`](crate::Policy::jitter_with).
    Custom(&'static dyn Jitterer),
}

/// A jitter of your own (EventSauce's `Jitter` interface): the sleep for a
/// delay, drawn from the call's random source. Give it to a policy with
/// [`Policy::jitter_with`](crate::Policy::jitter_with), or to the attribute
/// as `jitter = NAME`, the name of a `static` that implements it.
///
/// The policy caps what it returns at the strategy's maximum. `rng` is the
/// call's generator: seeded by [`Policy::seed`](crate::Policy::seed), and
/// drawn from the key under [`Policy::delay_for`](crate::Policy::delay_for),
/// so a jitterer that draws only from it is as reproducible as the
/// builtins.
///
/// ```
/// use backoff_runtime::jitter::{Jitterer, JitterRng};
/// use backoff_runtime::Policy;
/// use std::time::Duration;
///
/// /// At least the delay, and up to a second more.
/// #[derive(Debug)]
/// struct PlusUpToASecond;
///
/// impl Jitterer for PlusUpToASecond {
///     fn jitter(&self, delay: Duration, rng: &mut JitterRng) -> Duration {
///         delay + rng.uniform(Duration::ZERO, Duration::from_secs(1))
///     }
/// }
///
/// static PLUS: PlusUpToASecond = PlusUpToASecond;
///
/// let policy = Policy::constant(Duration::from_secs(2))
///     .max_delay(Duration::from_millis(2500))
///     .jitter_with(&PLUS)
///     .attempts(20);
/// for d in policy.delays() {
///     // Capped at `max`.
///     assert!(d >= Duration::from_secs(2) && d <= Duration::from_millis(2500));
/// }
/// // The same key, the same sleep.
/// assert_eq!(policy.delay_for(3, 42), policy.delay_for(3, 42));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `Jitterer`: `jitter = NAME` takes a `static` whose type does",
    label = "not a `Jitterer`",
    note = "implement `backoff_runtime::jitter::Jitterer` for your type, or write a jitter of the attribute's by name, as in `jitter = \"full\"` (a `Jitter` value goes in a `Policy`: `policy = ..`)"
)]
pub trait Jitterer: Sync + core::fmt::Debug {
    /// The sleep for `delay` (the strategy's delay, at most its maximum).
    fn jitter(&self, delay: Duration, rng: &mut JitterRng) -> Duration;
}

/// Two jitterers are equal when they are the same value (what
/// [`Jitter`]'s `PartialEq` compares for [`Jitter::Custom`]).
impl PartialEq for dyn Jitterer {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::addr_eq(self, other)
    }
}

impl Jitter {
    /// A checked [`Jitter::Scattered`]: `None` unless `0 < ratio ≤ 1`.
    ///
    /// ```
    /// use backoff_runtime::Jitter;
    ///
    /// assert_eq!(Jitter::scattered(0.5), Some(Jitter::Scattered(0.5)));
    /// assert_eq!(Jitter::scattered(0.0), None);
    /// assert_eq!(Jitter::scattered(1.5), None);
    /// assert_eq!(Jitter::scattered(f64::NAN), None);
    /// ```
    pub const fn scattered(ratio: f64) -> Option<Jitter> {
        if ratio > 0.0 && ratio <= 1.0 {
            Some(Jitter::Scattered(ratio))
        } else {
            None
        }
    }

    /// A checked [`Jitter::Range`]: `None` unless `0 ≤ lo ≤ hi`, both
    /// finite.
    ///
    /// ```
    /// use backoff_runtime::Jitter;
    ///
    /// assert_eq!(Jitter::range(0.5, 1.5), Some(Jitter::Range(0.5, 1.5)));
    /// assert_eq!(Jitter::range(1.0, 1.0), Some(Jitter::Range(1.0, 1.0)));
    /// assert_eq!(Jitter::range(1.5, 0.5), None);
    /// assert_eq!(Jitter::range(-0.1, 1.0), None);
    /// assert_eq!(Jitter::range(0.0, f32::INFINITY), None);
    /// ```
    pub const fn range(lo: f32, hi: f32) -> Option<Jitter> {
        if lo >= 0.0 && lo <= hi && hi.is_finite() {
            Some(Jitter::Range(lo, hi))
        } else {
            None
        }
    }

    /// Applies the jitter to `v`, never returning more than `max`.
    ///
    /// `v` is expected to be at most `max` already (the strategy caps it);
    /// if it is not, it is capped first. [`Jitter::Spread`] reads the whole
    /// schedule, which this method does not see: it returns `v` (capped).
    ///
    /// ```
    /// use backoff_runtime::{Jitter, JitterRng};
    /// use std::time::Duration;
    ///
    /// let mut rng = JitterRng::from_seed(1);
    /// let v = Duration::from_millis(400);
    /// let max = Duration::from_millis(450);
    /// let d = Jitter::Equal.apply(v, max, &mut rng);
    /// assert!(d >= Duration::from_millis(200) && d <= v);
    /// let d = Jitter::Scattered(0.5).apply(v, max, &mut rng);
    /// assert!(d >= Duration::from_millis(200) && d <= max);
    /// ```
    #[inline]
    #[doc(hidden)]
    pub fn apply(self, v: Duration, max: Duration, rng: &mut JitterRng) -> Duration {
        self.apply_capped(if v > max { max } else { v }, max, rng)
    }

    /// [`apply`](Jitter::apply) to a `v` already at most `max`, as every
    /// [`Strategy::capped_delay`](crate::Strategy::capped_delay) is. No
    /// jitter is decided inline; a draw is a call of [`drawn`](Jitter::drawn).
    #[inline(always)]
    pub(crate) fn apply_capped(self, v: Duration, max: Duration, rng: &mut JitterRng) -> Duration {
        match self {
            Jitter::None | Jitter::Spread => v,
            _ => self.drawn(v, max, rng),
        }
    }

    /// [`apply_capped`](Jitter::apply_capped) with a draw. Out of line and
    /// generic over nothing, it is compiled once, in this crate: the crates
    /// that use the attribute call it rather than optimize a copy of every
    /// random source per strategy (a call costs a few instructions per
    /// retry, next to a sleep).
    #[inline(never)]
    fn drawn(self, v: Duration, max: Duration, rng: &mut JitterRng) -> Duration {
        match self {
            Jitter::Full => rng.uniform(Duration::ZERO, v),
            // v/2 + uniform(0, v − v/2) = uniform(v/2, v), in whole nanoseconds.
            Jitter::Equal => rng.uniform(v / 2, v),
            // (Neither NaN nor at most zero: a ratio past 1 counts as 1.)
            Jitter::Scattered(r) if r > 0.0 => {
                let r = r.min(1.0);
                range(v, 1.0 - r, 1.0 + r, max, rng)
            }
            Jitter::Range(lo, hi) => range(v, f64::from(lo), f64::from(hi), max, rng),
            Jitter::Custom(j) => j.jitter(v, rng).min(max),
            Jitter::None | Jitter::Spread | Jitter::Scattered(_) => v,
        }
    }
}

/// `v` (at most `max`) times a factor drawn from `lo` to `hi`: the bounds of
/// [`Jitter::Range`], or `1 ∓ r` of [`Jitter::Scattered`].
#[inline(never)]
fn range(v: Duration, lo: f64, hi: f64, max: Duration, rng: &mut JitterRng) -> Duration {
    // (`!(x >= 0)` is true for NaN too.)
    let lo = if lo >= 0.0 { lo } else { 0.0 };
    let hi = if hi >= lo { hi } else { lo };
    let lo = nanos::mul_f64_capped(v, lo, max);
    let hi = nanos::mul_f64_capped(v, hi, max);
    rng.uniform(lo, hi)
}

/// The random source of jitter and of random strategies.
///
/// A `JitterRng` is cheap to create. Unseeded, it draws from a process-wide
/// sequence (SplitMix64) that starts from the operating system's randomness
/// (with the `std` feature; without it, from a fixed value, so seed
/// explicitly): it holds nothing, and concurrent calls draw distinct
/// numbers. Seeded, it is a sequence of its own (SplitMix64 from the seed),
/// which a seed always repeats.
///
/// It is `Send` and `Sync`, so holding one across an `.await` keeps a future
/// `Send`.
///
/// ```
/// use backoff_runtime::JitterRng;
/// use std::time::Duration;
///
/// let mut a = JitterRng::from_seed(42);
/// let mut b = JitterRng::from_seed(42);
/// let (lo, hi) = (Duration::from_millis(10), Duration::from_millis(20));
/// let d = a.uniform(lo, hi);
/// assert_eq!(d, b.uniform(lo, hi));
/// assert!(lo <= d && d <= hi);
/// ```
///
/// Its [`Default`] is [`JitterRng::from_entropy`]'s, unseeded.
#[derive(Debug, Clone, Default)]
pub struct JitterRng {
    /// Seeded: its own sequence's position (SplitMix64's, as the
    /// process-wide sequence counts); `None`: it draws from the process-wide
    /// sequence.
    seeded: Option<u64>,
    /// The call's [`Jitter::Spread`] phase, zero until it is drawn or set.
    pub(crate) phase: u32,
    /// Whether a number has been drawn.
    drawn: bool,
}

impl JitterRng {
    /// A generator that draws from the process-wide sequence: nothing to
    /// seed, and no two draws alike across the process's calls.
    #[doc(hidden)]
    pub const fn from_entropy() -> Self {
        JitterRng {
            seeded: None,
            ..JitterRng::from_seed(0)
        }
    }

    /// A generator that always produces the same sequence for the same seed.
    pub const fn from_seed(seed: u64) -> Self {
        JitterRng {
            seeded: Some(seed),
            phase: 0,
            drawn: false,
        }
    }

    /// The call's [`Jitter::Spread`] phase, in `1 ..= u32::MAX` (the
    /// fraction `phase / 2³²`): drawn at the first call, the same after.
    pub(crate) fn phase(&mut self) -> u32 {
        if self.phase == 0 {
            self.phase = ((Source(self).next_u64() >> 32) as u32).max(1);
        }
        self.phase
    }

    /// This generator with its phase set (zero: to be drawn).
    #[inline]
    pub(crate) const fn with_phase(mut self, phase: u32) -> Self {
        self.phase = phase;
        self
    }

    /// Whether a number has been drawn.
    #[cfg(test)]
    pub(crate) fn has_drawn(&self) -> bool {
        self.drawn
    }

    /// A duration drawn uniformly from `lo ..= hi` (nanosecond resolution).
    ///
    /// If `hi < lo` the bounds are swapped.
    #[inline]
    pub fn uniform(&mut self, lo: Duration, hi: Duration) -> Duration {
        let (lo, hi) = if hi < lo { (hi, lo) } else { (lo, hi) };
        if lo == hi {
            return lo;
        }
        if let (Some(lo), Some(hi)) = (nanos::of_u64(lo), nanos::of_u64(hi)) {
            return Duration::from_nanos(self.range_u64(lo, hi));
        }
        self.uniform_wide(lo, hi)
    }

    /// A number drawn uniformly from `lo ..= hi`, which must not be empty.
    #[inline]
    fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        // What `random_range(lo..=hi)` runs (the same draws, the same
        // result), without building the range and checking it again.
        <u64 as SampleUniform>::Sampler::sample_single_inclusive(lo, hi, &mut Source(self))
            .unwrap_or(lo)
    }

    /// [`uniform`](JitterRng::uniform) beyond `u64` nanoseconds (~584 years).
    #[cold]
    fn uniform_wide(&mut self, lo: Duration, hi: Duration) -> Duration {
        let n = Source(self).random_range(lo.as_nanos()..=hi.as_nanos());
        nanos::to_duration(n)
    }

    /// A number drawn uniformly from `[0, 1)`.
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        Source(self).random::<f64>()
    }
}

/// The process-wide sequence that unseeded generators draw from: a Weyl
/// sequence (golden-ratio increment) started from OS randomness, so
/// concurrent calls draw distinct numbers without locking, allocating, a
/// system call or a generator of their own.
static ENTROPY: AtomicU64 = AtomicU64::new(0);

/// The next 64 bits of the process-wide sequence: SplitMix64 (the Weyl
/// sequence through its finalizer), as Java's `SplittableRandom` draws.
#[inline]
fn next_entropy() -> u64 {
    if ENTROPY.load(Ordering::Relaxed) == 0 {
        start_entropy();
    }
    crate::jobs::mix64(ENTROPY.fetch_add(crate::jobs::GOLDEN_GAMMA, Ordering::Relaxed))
}

/// Starts the sequence from the operating system's randomness.
#[cold]
fn start_entropy() {
    // Another thread may win this race; either start is as good.
    let _ = ENTROPY.compare_exchange(0, os_seed() | 1, Ordering::Relaxed, Ordering::Relaxed);
}

/// Where a [`JitterRng`] draws from: its own sequence, or the process-wide
/// one, each SplitMix64 (a Weyl sequence through its finalizer). One
/// dispatch per number drawn (a jittered delay draws one).
struct Source<'a>(&'a mut JitterRng);

impl TryRng for Source<'_> {
    type Error = core::convert::Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        // (The high half, as the process-wide sequence's.)
        self.try_next_u64().map(|n| (n >> 32) as u32)
    }

    // (Out of line: inlined, it keeps `uniform` out of `Jitter::drawn`,
    // about 30 instructions more per jittered delay.)
    #[inline(never)]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        self.0.drawn = true;
        Ok(match &mut self.0.seeded {
            Some(position) => {
                *position = position.wrapping_add(crate::jobs::GOLDEN_GAMMA);
                crate::jobs::mix64(*position)
            }
            None => next_entropy(),
        })
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        rand::rand_core::utils::fill_bytes_via_next_word(dst, || self.try_next_u64())
    }
}

/// 64 bits from the operating system's randomness, through std: each
/// thread's first `RandomState` draws its SipHash keys from the OS (the
/// keys `HashMap` uses against HashDoS), and hashing nothing with them gives
/// 64 uniformly mixed bits. No dependency beyond std (no `getrandom`, no
/// `libc`), no allocation, one system call per thread at most.
#[cfg(feature = "std")]
fn os_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::hash::RandomState::new().build_hasher().finish()
}

#[cfg(not(feature = "std"))]
fn os_seed() -> u64 {
    0x853C_49E6_748F_EA9B
}

/// What [`spread`] reads of a strategy besides its cap: a trait of one
/// method, so that the pointer's table holds it alone (`dyn Fn` would hold
/// a by-value `call_once` as well, compiled in the caller's crate).
pub(crate) trait Centred {
    /// [`Strategy::central_delay`](crate::strategy::Strategy::central_delay).
    fn central(&self, retry: u32) -> Duration;
}

/// The [`Jitter::Spread`] delay before retry `retry` (from 1) of a call
/// whose phase is `phase / 2³²`: see [`Jitter::Spread`] for the rule.
///
/// With `c(k)` the strategy's [`central_delay`](crate::strategy::Strategy::central_delay),
/// the k-th retries of a herd fill the window `[A(k), A(k + 1))`, of width
/// `w(k) = A(k + 1) − A(k)`, and a call of phase `p` retries at
/// `A(k) + p · w(k)`: its wait before retry `k ≥ 2` is the blend
/// `(1 − p) · w(k − 1) + p · w(k)`, by the same `p` at every retry, so it
/// never shrinks on a schedule whose windows never do. Centred, `A(k)` is
/// `c(1) + … + c(k − 1) + c(k)/2` (the windows are centred on the
/// strategy's own retry times) and `w(k) = (c(k) + c(k + 1)) / 2`; on a
/// flat start, `A(k) = c(1) + … + c(k − 1)` and `w(k) = c(k)`.
///
/// `strategy` is behind a pointer, so this is compiled once, in this crate,
/// not once per strategy in every crate that uses the attribute (a spread
/// retry is rare next to the other jitters, and a sleep follows it).
#[inline(never)]
pub(crate) fn spread(strategy: &dyn Centred, max: Duration, retry: u32, phase: u32) -> Duration {
    let c = |k: u32| strategy.central(k.max(1));
    let p = f64::from(phase) / 4_294_967_296.0;
    // Centred windows, unless centring would make the first wait longer
    // than the second (a flat start: 2·c(1) > c(3)).
    let centred = c(1).saturating_mul(2) <= c(3);
    let half = |d: Duration| d / 2;
    let width = |k: u32| {
        if centred {
            (half(c(k)) + half(c(k.saturating_add(1)))).min(max)
        } else {
            c(k)
        }
    };
    let blend = |lo: Duration, hi: Duration| {
        nanos::mul_f64_capped(lo, 1.0 - p, max)
            .saturating_add(nanos::mul_f64_capped(hi, p, max))
            .min(max)
    };
    let first = || {
        let start = if centred { half(c(1)) } else { Duration::ZERO };
        start
            .saturating_add(nanos::mul_f64_capped(width(1), p, max))
            .min(max)
    };
    match retry {
        0 | 1 => {
            let w1 = width(1);
            // Never longer than the second wait (which rounding alone could
            // otherwise break).
            first().min(blend(w1, width(2)))
        }
        k => blend(width(k - 1), width(k)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn none_is_identity_and_capped() {
        let mut rng = JitterRng::from_seed(0);
        assert_eq!(Jitter::None.apply(MS(300), MS(500), &mut rng), MS(300));
        assert_eq!(Jitter::None.apply(MS(900), MS(500), &mut rng), MS(500));
        assert!(!rng.has_drawn(), "no jitter must not seed the generator");
    }

    #[test]
    fn every_jitter_stays_within_its_range() {
        let mut rng = JitterRng::from_seed(3);
        for _ in 0..10_000 {
            let full = Jitter::Full.apply(MS(100), MS(100), &mut rng);
            assert!(full <= MS(100));
            let equal = Jitter::Equal.apply(MS(100), MS(100), &mut rng);
            assert!(equal >= MS(50) && equal <= MS(100));
            let sc = Jitter::Scattered(0.2).apply(MS(100), MS(1000), &mut rng);
            assert!(sc >= MS(80) && sc <= MS(120), "{sc:?}");
            let capped = Jitter::Scattered(1.0).apply(MS(100), MS(110), &mut rng);
            assert!(capped <= MS(110));
        }
    }

    #[test]
    fn range_multiplies_within_its_bounds_and_the_cap() {
        let mut rng = JitterRng::from_seed(5);
        let draws: Vec<Duration> = (0..2000)
            .map(|_| Jitter::Range(0.5, 1.5).apply(MS(100), MS(140), &mut rng))
            .collect();
        assert!(draws.iter().all(|d| *d >= MS(50) && *d <= MS(140)));
        assert!(draws.iter().any(|d| *d < MS(60)));
        assert!(draws.iter().any(|d| *d > MS(130)));
        assert_eq!(
            Jitter::Range(1.0, 1.0).apply(MS(100), MS(140), &mut rng),
            MS(100)
        );
        // Bounds out of order, negative, NaN or infinite never panic nor
        // exceed the cap.
        for (lo, hi) in [
            (2.0, 1.0),
            (-1.0, 0.5),
            (f32::NAN, f32::NAN),
            (0.0, f32::INFINITY),
        ] {
            let d = Jitter::Range(lo, hi).apply(MS(100), MS(140), &mut rng);
            assert!(d <= MS(140), "{lo} {hi}: {d:?}");
        }
        assert_eq!(
            Jitter::Range(2.0, 1.0).apply(MS(100), MS(1000), &mut rng),
            MS(200)
        );
    }

    #[test]
    fn full_jitter_spreads_over_the_whole_range() {
        let mut rng = JitterRng::from_seed(11);
        let draws: Vec<Duration> = (0..1000)
            .map(|_| Jitter::Full.apply(MS(1000), MS(1000), &mut rng))
            .collect();
        assert!(draws.iter().any(|d| *d < MS(100)));
        assert!(draws.iter().any(|d| *d > MS(900)));
    }

    /// Scattered(r) draws over the whole of v·(1−r)..=v·(1+r) (through
    /// `range`, its bounds 1 ∓ r), and a ratio past 1 counts as 1.
    #[test]
    fn scattered_spreads_over_its_whole_range() {
        let mut rng = JitterRng::from_seed(7);
        let draws: Vec<Duration> = (0..2000)
            .map(|_| Jitter::Scattered(0.2).apply(MS(100), MS(1000), &mut rng))
            .collect();
        assert!(draws.iter().all(|d| *d >= MS(80) && *d <= MS(120)));
        assert!(draws.iter().any(|d| *d < MS(82)));
        assert!(draws.iter().any(|d| *d > MS(118)));
        let wide: Vec<Duration> = (0..2000)
            .map(|_| Jitter::Scattered(2.0).apply(MS(100), MS(1000), &mut rng))
            .collect();
        assert!(wide.iter().all(|d| *d <= MS(200)));
        assert!(wide.iter().any(|d| *d < MS(10)));
        assert!(wide.iter().any(|d| *d > MS(190)));
    }

    #[test]
    fn odd_scattered_ratios_never_panic() {
        let mut rng = JitterRng::from_seed(5);
        for r in [f64::NAN, -1.0, 0.0, 2.0, f64::INFINITY, f64::NEG_INFINITY] {
            let d = Jitter::Scattered(r).apply(MS(100), MS(150), &mut rng);
            assert!(d <= MS(150));
        }
        assert_eq!(
            Jitter::Scattered(f64::NAN).apply(MS(100), MS(150), &mut rng),
            MS(100)
        );
    }

    #[test]
    fn huge_delays_use_the_wide_path() {
        let mut rng = JitterRng::from_seed(9);
        let d = Jitter::Full.apply(Duration::MAX, Duration::MAX, &mut rng);
        assert!(d <= Duration::MAX);
        let d = Jitter::Scattered(1.0).apply(Duration::MAX, Duration::MAX, &mut rng);
        assert!(d <= Duration::MAX);
    }

    #[test]
    fn unseeded_generators_differ() {
        let mut a = JitterRng::from_entropy();
        // (The default is unseeded too.)
        let mut b = JitterRng::default();
        assert_eq!(b.seeded, None);
        assert_ne!(Source(&mut a).next_u64(), Source(&mut b).next_u64());
    }

    /// Unseeded draws, from the process-wide sequence, cover the range
    /// evenly (the mean of 2,000 uniform draws over 0..=1000 ms is within
    /// 15 standard deviations of 500 ms), and `Jitter::None` draws none.
    #[test]
    fn process_wide_draws_spread_over_the_range() {
        let mut rng = JitterRng::from_entropy();
        assert_eq!(Jitter::None.apply(MS(300), MS(500), &mut rng), MS(300));
        assert!(!rng.has_drawn());
        let draws: Vec<u128> = (0..2000)
            .map(|_| Jitter::Full.apply(MS(1000), MS(1000), &mut rng).as_millis())
            .collect();
        assert!(rng.has_drawn());
        assert!(draws.iter().any(|&d| d < 100) && draws.iter().any(|&d| d > 900));
        let mean = draws.iter().sum::<u128>() / 2000;
        assert!((400..=600).contains(&mean), "mean {mean} ms");
        let mut bytes = [0u8; 13];
        rand::Rng::fill_bytes(&mut Source(&mut JitterRng::from_entropy()), &mut bytes);
        assert_ne!(bytes, [0u8; 13]);
    }

    #[test]
    fn the_phase_is_drawn_once_and_kept() {
        for mut rng in [JitterRng::from_seed(3), JitterRng::from_entropy()] {
            assert_eq!(rng.phase, 0);
            let phase = rng.phase();
            assert_ne!(phase, 0);
            Source(&mut rng).next_u64();
            assert_eq!(rng.phase(), phase);
            assert_eq!(rng.clone().phase, phase);
        }
        // Seeded, the phase is the seed's.
        assert_eq!(
            JitterRng::from_seed(3).phase(),
            JitterRng::from_seed(3).phase()
        );
        assert_ne!(
            JitterRng::from_seed(3).phase(),
            JitterRng::from_seed(4).phase()
        );
        // A set phase is kept, and the generator still draws as its seed says.
        let mut set = JitterRng::from_seed(3).with_phase(77);
        assert_eq!(set.phase(), 77);
        assert_eq!(
            Source(&mut set).next_u64(),
            Source(&mut JitterRng::from_seed(3)).next_u64()
        );
        assert_eq!(set.phase(), 77);
        assert_eq!(size_of::<JitterRng>(), 24);
    }

    #[test]
    fn spread_leaves_a_lone_delay_alone() {
        let mut rng = JitterRng::from_seed(0);
        assert_eq!(Jitter::Spread.apply(MS(300), MS(500), &mut rng), MS(300));
        assert_eq!(Jitter::Spread.apply(MS(900), MS(500), &mut rng), MS(500));
        assert!(!rng.has_drawn());
    }

    #[test]
    fn rng_is_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<JitterRng>();
    }
}
