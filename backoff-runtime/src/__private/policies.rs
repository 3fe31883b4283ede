//! Policies `#[retry]` builds from literal arguments, named by a type
//! rather than written out in a `static` of each function.
//!
//! `Fixed<ExponentialOf<100_000_000>, false, 1, 5>::ORIGIN`
//! is the policy (and the loop's clock) of
//! `#[retry(attempts = 5)]` on a plain fn: every value is a const generic
//! argument, and the constants are the runtime's, so a function under
//! `#[retry]` adds no item and no body of its own to type-check, borrow-check
//! and evaluate (a `static` per function did: 6 % of the instructions
//! rustc spends checking a crate of 200 such functions). Functions with the
//! same arguments share one instance.
//!
//! Values: durations in nanoseconds (the attribute falls back to a `static`
//! for one of 585 years or more), a factor or a jitter ratio as its `f64`
//! bits, [`UNSET`] for an argument not given.

use core::marker::PhantomData;
use core::time::Duration;

use super::{ASYNC_CLOCK, SYNC_CLOCK};
use crate::driver::Origin;
use crate::jitter::Jitter;
use crate::policy::Policy;
use crate::strategy::{Constant, Decorrelated, Exponential, Fibonacci, Immediate, Linear};

/// An argument not given.
pub(crate) const UNSET: u64 = u64::MAX;

/// A strategy built from const generic arguments.
pub trait FixedStrategy {
    /// The strategy's type.
    type Strategy: 'static;
    /// The strategy.
    const STRATEGY: Self::Strategy;
}

const fn nanos(n: u64) -> Duration {
    Duration::from_nanos(n)
}

/// `exponential(base, max, factor)`, `linear(base, max)`, ...: a strategy
/// of a base delay and a cap (and exponential's factor).
macro_rules! with_base_and_max {
    ($(#[$doc:meta] $name:ident => $strategy:ident $(.$factor:ident)?,)*) => {$(
        #[$doc]
        pub struct $name<
            const BASE: u64,
            const MAX: u64 = { u64::MAX },
            const FACTOR: u64 = { u64::MAX },
        >;

        impl<const BASE: u64, const MAX: u64, const FACTOR: u64> FixedStrategy
            for $name<BASE, MAX, FACTOR>
        {
            type Strategy = $strategy;
            const STRATEGY: $strategy = {
                let s = $strategy::new(nanos(BASE));
                $(
                    let s = if FACTOR == UNSET { s } else { s.$factor(f64::from_bits(FACTOR)) };
                )?
                if MAX == UNSET { s } else { s.max_delay(nanos(MAX)) }
            };
        }
    )*};
}

with_base_and_max! {
    /// `exponential(base, max, factor)`.
    ExponentialOf => Exponential.factor,
    /// `linear(base, max)`.
    LinearOf => Linear,
    /// `fibonacci(base, max)`.
    FibonacciOf => Fibonacci,
    /// `decorrelated(base, max)`.
    DecorrelatedOf => Decorrelated,
    /// `constant(delay)` (and `max`).
    ConstantOf => Constant,
}

impl FixedStrategy for Immediate {
    type Strategy = Immediate;
    const STRATEGY: Immediate = Immediate;
}

/// A policy: the strategy `S`, whether the loop is async (its clock), a
/// jitter (`u64::MAX`: the strategy's default, [`Builtin::default_jitter`](crate::strategy::Builtin::default_jitter);
/// 0 none, 1 full, 2 equal, 3 spread, else a scattered jitter's ratio as
/// `f64` bits), an attempt limit (`u64::MAX`:
/// the default; 0: unlimited) and `max_elapsed` in nanoseconds (`u64::MAX`:
/// none). The attribute writes the arguments up to the last one not at its
/// default (`Fixed<ExponentialOf<100000000>, true>`).
pub struct Fixed<
    S,
    const ASYNC: bool,
    const JITTER: u64 = { u64::MAX },
    const ATTEMPTS: u64 = { u64::MAX },
    const ELAPSED: u64 = { u64::MAX },
>(PhantomData<S>);

/// The start of a plain fn's blocking loop whose policy is the type `P`
/// (a `Fixed`): its `ORIGIN`. A generic call, so that checking a crate
/// evaluates no constant per function (`&<P>::ORIGIN` would be promoted,
/// and evaluated, there); the loop sees the constant once inlined.
#[inline(always)]
pub const fn origin<P: FixedOrigin>() -> &'static Origin<'static, P::Strategy> {
    P::ORIGIN
}

/// A `Fixed` policy's `ORIGIN`, for the steps that build its state.
pub trait FixedOrigin {
    /// The strategy.
    type Strategy: crate::strategy::Strategy + 'static;
    /// What a [`Carried`](crate::state::Carried) of this policy keeps of
    /// the previous delay.
    type Previous: crate::state::Previous;
    /// The policy and the loop's clock.
    const ORIGIN: &'static Origin<'static, Self::Strategy>;
}

/// The policy of a `Fixed` whose strategy is `$of` (one impl per
/// strategy: the constants' types are then concrete, which a `'static`
/// borrow of a constant needs).
macro_rules! fixed_policy {
    ($($of:ty => [$($generics:tt)*] $strategy:ident, $previous:ty;)*) => {$(
        impl<$($generics)* const ASYNC: bool, const JITTER: u64, const ATTEMPTS: u64, const ELAPSED: u64>
            Fixed<$of, ASYNC, JITTER, ATTEMPTS, ELAPSED>
        {
            const POLICY: Policy<$strategy> = {
                let jitter = match JITTER {
                    UNSET => crate::strategy::Builtin::$strategy(<$of as FixedStrategy>::STRATEGY).default_jitter(),
                    0 => Jitter::None,
                    1 => Jitter::Full,
                    2 => Jitter::Equal,
                    3 => Jitter::Spread,
                    bits => Jitter::Scattered(f64::from_bits(bits)),
                };
                let policy = Policy::from_strategy(<$of as FixedStrategy>::STRATEGY).jitter(jitter);
                let policy = match ATTEMPTS {
                    UNSET => policy,
                    0 => policy.unlimited_attempts(),
                    // (The attribute gives at most `u32::MAX`.)
                    n => policy.attempts(n as u32),
                };
                if ELAPSED == UNSET {
                    policy
                } else {
                    policy.max_elapsed(nanos(ELAPSED))
                }
            };

            /// The policy.
            pub const REF: &'static Policy<$strategy> = &Self::POLICY;

            /// The policy and the loop's clock.
            pub const ORIGIN: Origin<'static, $strategy> =
                Origin::new(Self::REF, if ASYNC { ASYNC_CLOCK } else { SYNC_CLOCK });
        }

        impl<$($generics)* const ASYNC: bool, const JITTER: u64, const ATTEMPTS: u64, const ELAPSED: u64>
            FixedOrigin for Fixed<$of, ASYNC, JITTER, ATTEMPTS, ELAPSED>
        {
            type Strategy = $strategy;
            type Previous = $previous;
            const ORIGIN: &'static Origin<'static, $strategy> = &Self::ORIGIN;
        }
    )*};
}

fixed_policy! {
    // (Only `decorrelated`'s delays depend on the previous one.)
    ExponentialOf<BASE, MAX, FACTOR> => [const BASE: u64, const MAX: u64, const FACTOR: u64,] Exponential, [Option<Duration>; 0];
    LinearOf<BASE, MAX> => [const BASE: u64, const MAX: u64,] Linear, [Option<Duration>; 0];
    FibonacciOf<BASE, MAX> => [const BASE: u64, const MAX: u64,] Fibonacci, [Option<Duration>; 0];
    DecorrelatedOf<BASE, MAX> => [const BASE: u64, const MAX: u64,] Decorrelated, [Option<Duration>; 1];
    ConstantOf<BASE, MAX> => [const BASE: u64, const MAX: u64,] Constant, [Option<Duration>; 0];
    Immediate => [] Immediate, [Option<Duration>; 0];
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// The policy a `Fixed` names is the one the builder makes from the
    /// same arguments (what the attribute wrote out before), for each
    /// strategy, jitter and limit.
    #[test]
    fn fixed_policies_equal_the_builders() {
        const F15: u64 = 0x3FF8_0000_0000_0000; // 1.5
        const R25: u64 = 0x3FD0_0000_0000_0000; // 0.25
        assert_eq!(F15, 1.5f64.to_bits());
        assert_eq!(R25, 0.25f64.to_bits());
        assert_eq!(
            *Fixed::<ExponentialOf<{ 100 * MS }, UNSET, UNSET>, false, 1, UNSET, UNSET>::REF,
            Policy::from_strategy(Exponential::new(ms(100))).jitter(Jitter::Full)
        );
        // Without a jitter, the strategy's default: the constructors'.
        let exponential = Fixed::<ExponentialOf<{ 100 * MS }>, false>::REF;
        assert_eq!(
            exponential.jitter_kind(),
            Policy::exponential(ms(100)).jitter_kind()
        );
        let immediate = Fixed::<Immediate, false>::REF;
        assert_eq!(immediate.jitter_kind(), Policy::immediate().jitter_kind());
        let decorrelated = Fixed::<DecorrelatedOf<{ 5 * MS }>, true>::REF;
        assert_eq!(
            decorrelated.jitter_kind(),
            Policy::decorrelated(ms(5)).jitter_kind()
        );
        assert_eq!(
            *Fixed::<ExponentialOf<{ 10 * MS }, { 1000 * MS }, F15>, true, 2, 5, { 3000 * MS }>::REF,
            Policy::from_strategy(Exponential::new(ms(10)).factor(1.5).max_delay(ms(1000)))
                .jitter(Jitter::Equal)
                .attempts(5)
                .max_elapsed(ms(3000))
        );
        assert_eq!(
            *Fixed::<LinearOf<{ 20 * MS }, { 2000 * MS }>, false, R25, 0, UNSET>::REF,
            Policy::from_strategy(Linear::new(ms(20)).max_delay(ms(2000)))
                .jitter(Jitter::Scattered(0.25))
                .unlimited_attempts()
        );
        assert_eq!(
            *Fixed::<ConstantOf<{ 50 * MS }, UNSET>, false, 0, 3, UNSET>::REF,
            Policy::from_strategy(Constant::new(ms(50)))
                .jitter(Jitter::None)
                .attempts(3)
        );
        assert_eq!(
            *Fixed::<FibonacciOf<{ 5 * MS }, { 800 * MS }>, false, 1, 4, UNSET>::REF,
            Policy::from_strategy(Fibonacci::new(ms(5)).max_delay(ms(800)))
                .jitter(Jitter::Full)
                .attempts(4)
        );
        assert_eq!(
            *Fixed::<DecorrelatedOf<{ 5 * MS }, { 1000 * MS }>, true, 0, 0, { 10_000 * MS }>::REF,
            Policy::from_strategy(Decorrelated::new(ms(5)).max_delay(ms(1000)))
                .jitter(Jitter::None)
                .unlimited_attempts()
                .max_elapsed(ms(10_000))
        );
        assert_eq!(
            *Fixed::<LinearOf<{ 20 * MS }, UNSET>, false, 3, 4, UNSET>::REF,
            Policy::from_strategy(Linear::new(ms(20)))
                .jitter(Jitter::Spread)
                .attempts(4)
        );
        assert_eq!(
            *Fixed::<Immediate, false, 0, 2, UNSET>::REF,
            Policy::from_strategy(Immediate)
                .jitter(Jitter::None)
                .attempts(2)
        );
    }

    /// The clock is the loop's: the system's for a plain fn, the async
    /// clock (tokio's, with the `tokio` feature) for an `async fn`.
    #[test]
    fn the_start_carries_the_loops_clock() {
        type Sync = Fixed<Immediate, false, 0, 2, UNSET>;
        type Async = Fixed<Immediate, true, 0, 2, UNSET>;
        assert_eq!(Sync::ORIGIN.clock as usize, SYNC_CLOCK as usize);
        assert_eq!(Async::ORIGIN.clock as usize, ASYNC_CLOCK as usize);
        assert!(core::ptr::eq(Sync::ORIGIN.policy, Sync::REF));
    }
}
