//! Backoff strategies: how long to wait before each retry, before jitter.
//!
//! Retry `k` (k = 1 is the retry after the first failed attempt) waits:
//!
//! | strategy | delay of retry k |
//! |---|---|
//! | [`Exponential`] | base · factor^(k−1), capped at max |
//! | [`Linear`] | base · k, capped at max |
//! | [`Constant`] | delay (capped at max, if one is set) |
//! | [`Fibonacci`] | base · fib(k), fib = 1, 1, 2, 3, 5 …, capped at max |
//! | [`Decorrelated`] | min(max, uniform(base, 3 · previous)), previous starts at base |
//! | [`Immediate`] | zero |
//! | [`Sidekiq`] | n⁴ + 15 + rand · 30 · (n + 1) seconds, n = k − 1 |
//! | [`Buckets`] | uniform(n³, (n + 2)³) seconds, n = k − 1 |
//! | [`Chain`] | the first stage's delay k for k ≤ times, then the second's delay k − times |
//! | [`Steps`] | the k-th of a list of delays, the last repeating |
//! | [`Shorter`] · [`Longer`] | the smaller · larger of two stages' delay k |
//! | [`Sum`] | two stages' delay k added, saturating |
//!
//! [`Chain`], [`Shorter`], [`Longer`] and [`Sum`] take stages: any
//! strategy, composed ones included (see [Composition](self#composition)).
//!
//! # Composition
//!
//! | form | `max_delay` |
//! |---|---|
//! | [`Chain`] | the larger of its stages' |
//! | [`Steps`] | the largest step |
//! | [`Shorter`] · [`Longer`] | the smaller · larger of its stages' |
//! | [`Sum`] | its stages' added, saturating |
//!
//! Jitter applies once, to the composed delay, and no sleep exceeds the
//! composed `max_delay`.
//!
//! Every computation saturates: any `k` up to `u32::MAX`, any base up to
//! [`Duration::MAX`], never overflows or panics.
//!
//! Implement [`Strategy`] to plug in your own, and run it with
//! [`Policy::from_strategy`](crate::Policy::from_strategy).

use core::time::Duration;

use crate::jitter::{Jitter, JitterRng};

/// Inside the `impl Strategy` of a strategy whose `delay` never exceeds its
/// `max_delay`: `capped_delay` need not cap again. Given a field, the
/// strategy's `max_delay` is that field.
macro_rules! caps_its_own_delays {
    () => {
        #[inline]
        fn capped_delay(
            &self,
            retry: u32,
            previous: Option<Duration>,
            rng: &mut JitterRng,
        ) -> Duration {
            self.delay(retry, previous, rng)
        }
    };
    ($max:ident) => {
        caps_its_own_delays!();

        #[inline]
        fn max_delay(&self) -> Duration {
            self.$max
        }
    };
}

/// Inside the `impl Strategy` of a strategy that ignores `previous`: the
/// policy need not keep it.
macro_rules! ignores_previous {
    () => {
        #[inline]
        fn reads_previous(&self) -> bool {
            false
        }
    };
}

/// Inside the `impl Strategy` of a type that reads another strategy's
/// schedule (`$via!(self, s => s.method(..))` calls a method on it): the
/// five methods that read it, each that strategy's.
macro_rules! reads_through {
    ($via:ident) => {
        #[inline]
        fn delay(&self, retry: u32, previous: Option<Duration>, rng: &mut JitterRng) -> Duration {
            $via!(self, s => s.delay(retry, previous, rng))
        }

        #[inline]
        fn capped_delay(
            &self,
            retry: u32,
            previous: Option<Duration>,
            rng: &mut JitterRng,
        ) -> Duration {
            $via!(self, s => s.capped_delay(retry, previous, rng))
        }

        #[inline]
        fn max_delay(&self) -> Duration {
            $via!(self, s => s.max_delay())
        }

        fn central_delay(&self, retry: u32) -> Duration {
            $via!(self, s => s.central_delay(retry))
        }

        #[inline]
        fn reads_previous(&self) -> bool {
            $via!(self, s => s.reads_previous())
        }
    };
}
#[cfg(feature = "std")]
pub(crate) use reads_through;

/// A strategy of two durations, `base` or `unit` and the cap `max`: the
/// type, `new` and the builder step of the cap; for a schedule in `unit`s
/// (by default seconds, uncapped: [`Sidekiq`], [`Buckets`]), the step of
/// the unit and `Default` too.
macro_rules! two_durations {
    (@type $(#[$doc:meta])* $name:ident($first:ident)) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $name {
            $first: Duration,
            max: Duration,
        }

        impl $name {
            /// Sets the cap on every delay.
            pub const fn max_delay(mut self, max: Duration) -> Self {
                self.max = max;
                self
            }
        }
    };
    ($(#[$doc:meta])* $name:ident(base), $(#[$new_doc:meta])*) => {
        two_durations!(@type $(#[$doc])* $name(base));

        impl $name {
            $(#[$new_doc])*
            pub const fn new(base: Duration) -> Self {
                $name {
                    base,
                    max: $crate::strategy::DEFAULT_MAX,
                }
            }
        }
    };
    // (A schedule in `unit`s: retry `k` draws uniformly from a window of
    // `n = k − 1`, whose middle is its central delay.)
    ($(#[$doc:meta])* $name:ident(unit), $(#[$new_doc:meta])* |$n:ident| $window:expr) => {
        two_durations!(@type $(#[$doc])* $name(unit));

        impl Strategy for $name {
            ignores_previous!();
            caps_its_own_delays!(max);

            fn delay(&self, retry: u32, _previous: Option<Duration>, rng: &mut JitterRng) -> Duration {
                let $n = f64::from(retry.saturating_sub(1));
                let (lo, hi) = $window;
                let units = |x| crate::nanos::mul_f64_capped(self.unit, x, self.max);
                rng.uniform(units(lo), units(hi))
            }

            /// The middle of the window, capped.
            fn central_delay(&self, retry: u32) -> Duration {
                let $n = f64::from(retry.saturating_sub(1));
                let (lo, hi) = $window;
                crate::nanos::mul_f64_capped(self.unit, (lo + hi) / 2.0, self.max)
            }
        }

        impl $name {
            $(#[$new_doc])*
            pub const fn new() -> Self {
                $name {
                    unit: Duration::from_secs(1),
                    max: Duration::MAX,
                }
            }

            /// Scales the schedule: the formula counts in `unit`s instead of
            /// seconds (handy for simulations and tests).
            pub const fn unit(mut self, unit: Duration) -> Self {
                self.unit = unit;
                self
            }
        }

        impl Default for $name {
            fn default() -> Self {
                $name::new()
            }
        }
    };
}

mod compose;
mod constant;
mod exponential;
mod fibonacci;
mod linear;
mod random;
mod stage;

pub use compose::{Chain, Longer, Shorter, Steps, Sum};
pub use constant::{Constant, Immediate};
pub use exponential::Exponential;
pub use fibonacci::Fibonacci;
pub use linear::Linear;
pub use random::{Buckets, Decorrelated, Sidekiq};
pub use stage::{At, Leaf, MAX_MARKS, Mark, Stage, Staging};

/// A backoff schedule: the delay before each retry, before jitter.
///
/// Implementations must not panic for any `retry` and should return at most
/// [`max_delay`](Strategy::max_delay); the policy caps the result there anyway
/// (and caps the jittered delay there too).
///
/// # Examples
///
/// A schedule that waits 1 s, then 5 s, then 30 s from then on:
///
/// ```
/// use backoff_runtime::{JitterRng, Policy, Strategy};
/// use std::time::Duration;
///
/// struct Steps;
///
/// impl Strategy for Steps {
///     fn delay(&self, retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
///         match retry {
///             0 | 1 => Duration::from_secs(1),
///             2 => Duration::from_secs(5),
///             _ => Duration::from_secs(30),
///         }
///     }
/// }
///
/// let policy = Policy::from_strategy(Steps).attempts(5);
/// let secs: Vec<u64> = policy.delays().map(|d| d.as_secs()).collect();
/// assert_eq!(secs, [1, 5, 30, 30]);
/// ```
pub trait Strategy {
    /// The delay before retry `retry` (1 for the first retry), before jitter.
    ///
    /// `previous` is what this method returned for the previous retry of the
    /// same call (`None` before the first retry); `rng` is the call's random
    /// source, for strategies that are random by themselves.
    fn delay(&self, retry: u32, previous: Option<Duration>, rng: &mut JitterRng) -> Duration;

    /// The longest delay this strategy allows; no sleep, jittered or not,
    /// exceeds it.
    ///
    /// # Default
    ///
    /// [`Duration::MAX`]: no cap.
    #[inline]
    fn max_delay(&self) -> Duration {
        Duration::MAX
    }

    /// The delay of retry `retry` without randomness, at most
    /// [`max_delay`](Strategy::max_delay): what
    /// [`Jitter::Spread`] spreads around.
    ///
    /// # Default
    ///
    /// [`delay`](Strategy::delay) with no previous delay and a generator
    /// of fixed seed, capped: the delay itself for a strategy that is
    /// neither random nor reads `previous`. Override it for one that is
    /// (the builtins [`Sidekiq`] and [`Buckets`] give their mean,
    /// [`Decorrelated`] its mid-range chain). It must not panic for any
    /// `retry`, and is called twice per spread delay, so it should not
    /// loop over the retries before `retry`.
    ///
    /// ```
    /// use backoff_runtime::{Strategy, strategy::{Exponential, Sidekiq}};
    /// use std::time::Duration;
    ///
    /// let s = Exponential::new(Duration::from_millis(100));
    /// assert_eq!(s.central_delay(3), Duration::from_millis(400));
    /// // Sidekiq's mean: n⁴ + 15 + 15·(n + 1) seconds, n = retry − 1.
    /// assert_eq!(Sidekiq::new().central_delay(3), Duration::from_secs(16 + 15 + 45));
    /// ```
    fn central_delay(&self, retry: u32) -> Duration {
        self.capped_delay(retry, None, &mut JitterRng::from_seed(0))
            .min(self.max_delay())
    }

    /// [`delay`](Strategy::delay) capped at [`max_delay`](Strategy::max_delay);
    /// the builtins, which cap already, skip the second step.
    #[doc(hidden)]
    #[inline]
    fn capped_delay(
        &self,
        retry: u32,
        previous: Option<Duration>,
        rng: &mut JitterRng,
    ) -> Duration {
        self.delay(retry, previous, rng).min(self.max_delay())
    }

    /// Whether [`capped_delay`](Strategy::capped_delay) reads `previous`; the
    /// builtins that never do skip keeping it.
    #[doc(hidden)]
    #[inline]
    fn reads_previous(&self) -> bool {
        true
    }

    /// Whether this schedule ends, reads the time, or keeps marks (a
    /// [`Stage`] or a [`Chain`] that ends by time, or one holding them).
    #[doc(hidden)]
    #[inline]
    fn staging(&self) -> Staging {
        Staging::default()
    }

    /// The capped delay of `retry` (through `leaf`), `now` after the
    /// schedule began (`at`: `(now, marks)`), or `None` once it has ended;
    /// `marks` are this schedule's ([`staging`](Strategy::staging)`().marks` of them, fewer
    /// past [`MAX_MARKS`]).
    #[doc(hidden)]
    #[inline]
    fn staged(&self, retry: u32, _: At<'_>, leaf: &mut Leaf<'_>) -> Option<Duration> {
        Some(leaf.of(self, retry))
    }
}

/// Calls `$call` on the strategy behind a reference.
macro_rules! deref {
    ($this:expr, $s:ident => $call:expr) => {{
        let $s = &**$this;
        $call
    }};
}

impl<S: Strategy + ?Sized> Strategy for &S {
    reads_through!(deref);

    #[inline]
    fn staging(&self) -> Staging {
        (**self).staging()
    }

    fn staged(&self, retry: u32, at: At<'_>, leaf: &mut Leaf<'_>) -> Option<Duration> {
        (**self).staged(retry, at, leaf)
    }
}

/// The strategies the attribute and the [`Policy`](crate::Policy)
/// constructors use.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Builtin {
    /// See [`Exponential`].
    Exponential(Exponential),
    /// See [`Linear`].
    Linear(Linear),
    /// See [`Constant`].
    Constant(Constant),
    /// See [`Fibonacci`].
    Fibonacci(Fibonacci),
    /// See [`Decorrelated`].
    Decorrelated(Decorrelated),
    /// See [`Immediate`].
    Immediate(Immediate),
}

impl Builtin {
    /// The jitter a policy over this strategy has when none is set: none
    /// for [`Decorrelated`] (random by itself) and [`Immediate`] (it never
    /// waits), full for the others. The [`Policy`](crate::Policy)
    /// constructors and `#[retry]` use this table.
    ///
    /// ```
    /// use backoff_runtime::{Jitter, strategy::{Builtin, Decorrelated, Linear}};
    /// use std::time::Duration;
    ///
    /// let ms = Duration::from_millis(100);
    /// assert_eq!(Builtin::Linear(Linear::new(ms)).default_jitter(), Jitter::Full);
    /// assert_eq!(Builtin::Decorrelated(Decorrelated::new(ms)).default_jitter(), Jitter::None);
    /// ```
    pub const fn default_jitter(&self) -> Jitter {
        match self {
            Builtin::Decorrelated(_) | Builtin::Immediate(_) => Jitter::None,
            _ => Jitter::Full,
        }
    }
}

/// Calls `$call` on whichever strategy a [`Builtin`] holds.
macro_rules! each_builtin {
    ($builtin:expr, $s:ident => $call:expr) => {
        match $builtin {
            Builtin::Exponential($s) => $call,
            Builtin::Linear($s) => $call,
            Builtin::Constant($s) => $call,
            Builtin::Fibonacci($s) => $call,
            Builtin::Decorrelated($s) => $call,
            Builtin::Immediate($s) => $call,
        }
    };
}

// Every builtin caps its own delays; some skip work when they know the
// previous delay.
impl Strategy for Builtin {
    reads_through!(each_builtin);
}

/// The default cap of the growing strategies: 10 s.
#[doc(hidden)]
pub const DEFAULT_MAX: Duration = Duration::from_secs(10);

/// The jittered delay before retry `retry` of `strategy`; `previous`
/// carries the strategy's un-jittered delay from one retry to the next.
#[inline]
pub(crate) fn backoff<T: Strategy + ?Sized>(
    strategy: &T,
    jitter: Jitter,
    retry: u32,
    previous: &mut Option<Duration>,
    rng: &mut JitterRng,
) -> Duration {
    // (A strategy whose cap is zero, `Immediate`, spreads nothing: the test
    // of its constant cap folds the branch away, and its step with it.)
    if let Jitter::Spread = jitter
        && !strategy.max_delay().is_zero()
    {
        return spread(strategy, retry, rng);
    }
    let raw = strategy.capped_delay(retry, *previous, rng);
    jittered(strategy, jitter, raw, previous, rng)
}

/// [`backoff`] under [`Jitter::Spread`]: out of the way of the other
/// jitters' path, and compiled once, in this crate, but for this call.
#[cold]
#[inline(never)]
fn spread<T: Strategy + ?Sized>(strategy: &T, retry: u32, rng: &mut JitterRng) -> Duration {
    crate::jitter::spread(&Central(strategy), strategy.max_delay(), retry, rng.phase())
}

/// A strategy as [`jitter::spread`](crate::jitter::spread) reads it (here,
/// not in `jitter`, which names no strategy).
struct Central<'a, T: ?Sized>(&'a T);

impl<T: Strategy + ?Sized> crate::jitter::Centred for Central<'_, T> {
    fn central(&self, retry: u32) -> Duration {
        self.0.central_delay(retry)
    }
}

/// The jitter applied to `raw`, the strategy's capped delay, which is kept
/// in `previous` if the strategy reads it.
#[inline(always)]
pub(crate) fn jittered<T: Strategy + ?Sized>(
    strategy: &T,
    jitter: Jitter,
    raw: Duration,
    previous: &mut Option<Duration>,
    rng: &mut JitterRng,
) -> Duration {
    if strategy.reads_previous() {
        *previous = Some(raw);
    }
    // Every jitter leaves a zero delay zero, and draws nothing for it: for
    // `Immediate` the whole step folds away.
    if raw.is_zero() || matches!(jitter, Jitter::None) {
        raw
    } else {
        jitter.apply_capped(raw, strategy.max_delay(), rng)
    }
}

#[cfg(test)]
pub(crate) fn schedule<S: Strategy>(s: &S, n: u32) -> Vec<u64> {
    let mut rng = JitterRng::from_seed(0);
    let mut previous = None;
    (1..=n)
        .map(|k| {
            let d = s.delay(k, previous, &mut rng);
            previous = Some(d);
            d.as_millis() as u64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A strategy of one's own that ignores its own cap.
    struct Overshoots;

    impl Strategy for Overshoots {
        fn delay(&self, retry: u32, _: Option<Duration>, _: &mut JitterRng) -> Duration {
            Duration::from_secs(u64::from(retry) * 10)
        }

        fn max_delay(&self) -> Duration {
            Duration::from_secs(15)
        }
    }

    #[test]
    fn the_policy_caps_a_strategy_that_does_not_cap_itself() {
        let policy = crate::Policy::from_strategy(Overshoots).attempts(4);
        let secs: Vec<u64> = policy.delays().map(|d| d.as_secs()).collect();
        assert_eq!(secs, [10, 15, 15]);
    }
}
