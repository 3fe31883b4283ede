//! Schedules made of schedules: [`Chain`], [`Steps`], [`Shorter`],
//! [`Longer`] and [`Sum`], each a [`Strategy`] built by `const fn`s, so a
//! composed policy can live in a `static` like any other.
//!
//! | form | delay of retry k | [`max_delay`](Strategy::max_delay) |
//! |---|---|---|
//! | [`Chain::new(a, n, b)`](Chain::new) | `a`'s delay k for k ≤ n, then `b`'s delay k − n | the larger |
//! | [`Steps::new(&[d1, …, dm])`](Steps::new) | dk, the last repeating | the largest |
//! | [`Shorter::new(a, b)`](Shorter::new) | the smaller of `a`'s and `b`'s delay k | the smaller (the larger if a side ends) |
//! | [`Longer::new(a, b)`](Longer::new) | the larger of `a`'s and `b`'s delay k | the larger |
//! | [`Sum::new(a, b)`](Sum::new) | `a`'s plus `b`'s delay k, saturating | both added, saturating |
//!
//! Every stage caps its own delay at its own maximum before it is combined,
//! so each form caps its own delays too. Jitter, set on the
//! [`Policy`](crate::Policy), applies once, to the combined delay.

use core::time::Duration;

use super::stage::End;
use super::{At, Leaf, Mark, Staging, Strategy};
use crate::jitter::JitterRng;

/// `a` for the first `times` retries, then `b`, which starts at its own
/// first retry: retry `k` waits `a`'s delay `k` for `k ≤ times`, then `b`'s
/// delay `k − times`.
///
/// A chain of more stages nests: `Chain::new(a, 2, Chain::new(b, 3, c))`
/// waits `a` twice, `b` three times, then `c` from then on.
///
/// A stage that reads the previous delay (such as
/// [`Decorrelated`](super::Decorrelated)) reads its own: `b` sees no
/// previous delay at its first retry, so it starts from its base.
///
/// [`max_delay`](Strategy::max_delay) is the larger of the two stages'.
///
/// # Examples
///
/// Three quick retries, then one a minute:
///
/// ```
/// use backoff_runtime::{Policy, strategy::{Chain, Constant, Exponential}};
/// use std::time::Duration;
///
/// static POLICY: Policy<Chain<Exponential, Constant>> = Policy::from_strategy(Chain::new(
///     Exponential::new(Duration::from_millis(100)),
///     3,
///     Constant::new(Duration::from_secs(60)),
/// ))
/// .attempts(6);
/// let ms: Vec<u128> = POLICY.delays().map(|d| d.as_millis()).collect();
/// assert_eq!(ms, [100, 200, 400, 60_000, 60_000]);
/// ```
///
/// A chain whose first stage ends by time, [`Chain::lasting`]: it ends at
/// the first failure once its time has passed since it began, and the
/// second stage starts at its own first retry and its own time. A first
/// stage that ends by itself (a [`Stage`](super::Stage), or one holding
/// one) hands over to the second when it ends, and a chain ends when its
/// second stage does. A chain keeps one [`Mark`] of the call's when it
/// ends by time or holds a stage that does.
///
/// ```
/// use backoff_runtime::{Jitter, Policy, strategy::{Chain, Constant}};
/// use std::time::Duration;
///
/// const S: Duration = Duration::from_secs(1);
/// static POLICY: Policy<Chain<Constant, Constant>> =
///     Policy::from_strategy(Chain::lasting(Constant::new(S), S.saturating_mul(3), Constant::new(S.saturating_mul(60))))
///         .jitter(Jitter::None)
///         .attempts(6);
/// // With instant failures: 1 s until 3 s have passed, then a minute.
/// let secs: Vec<u64> = POLICY.delays().map(|d| d.as_secs()).collect();
/// assert_eq!(secs, [1, 1, 1, 60, 60]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chain<A, B> {
    first: A,
    end: End,
    then: B,
}

impl<A, B> Chain<A, B> {
    /// `first` for the first `times` retries, then `then`.
    pub const fn new(first: A, times: u32, then: B) -> Self {
        Chain {
            first,
            end: End::Times(times),
            then,
        }
    }

    /// `first` until the first failure once `d` has passed since the
    /// chain began (the call's start, for a chain that is not itself a
    /// later stage), then `then`.
    pub const fn lasting(first: A, d: Duration, then: B) -> Self {
        Chain {
            first,
            end: End::For(d),
            then,
        }
    }
}

impl<A: Strategy, B: Strategy> Strategy for Chain<A, B> {
    caps_its_own_delays!();

    /// Read without a call, a chain whose first stage ends by time stays
    /// in its first stage.
    #[inline]
    fn delay(&self, retry: u32, previous: Option<Duration>, rng: &mut JitterRng) -> Duration {
        match self.own(retry) {
            None => self.first.capped_delay(retry, previous, rng),
            // The second stage starts afresh: the delay before its first
            // retry is the first stage's, not its own.
            Some(own) => {
                let previous = if own == 1 { None } else { previous };
                self.then.capped_delay(own, previous, rng)
            }
        }
    }

    /// The larger of the two stages' maxima.
    #[inline]
    fn max_delay(&self) -> Duration {
        self.first.max_delay().max(self.then.max_delay())
    }

    fn central_delay(&self, retry: u32) -> Duration {
        match self.own(retry) {
            None => self.first.central_delay(retry),
            Some(own) => self.then.central_delay(own),
        }
    }

    #[inline]
    fn reads_previous(&self) -> bool {
        self.first.reads_previous() || self.then.reads_previous()
    }

    #[inline]
    fn staging(&self) -> Staging {
        let inner = self.first.staging().and(self.then.staging());
        let timed = matches!(self.end, End::For(_));
        if !timed && !inner.is_staged() {
            return Staging::default();
        }
        // (Ends when its last stage does.)
        Staging {
            ends: self.then.staging().ends,
            parts_end: inner.parts_end,
            timed: timed || inner.timed,
            marks: inner.marks + 1,
        }
    }

    fn staged(&self, retry: u32, (now, marks): At<'_>, leaf: &mut Leaf<'_>) -> Option<Duration> {
        let Some((mark, rest)) = marks
            .split_first_mut()
            .filter(|_| self.staging().is_staged())
        else {
            // (Nothing that ends or reads the time, or past `MAX_MARKS`: by
            // count only.)
            return Some(leaf.of(self, retry));
        };
        let (first, then) = rest.split_at_mut(self.first.staging().marks.min(rest.len()));
        if mark.switched != 0 && retry < mark.switched {
            // (A spread's look back, before the boundary crossed.)
            return self
                .first
                .staged(retry, (now, first), leaf)
                .or_else(|| Some(leaf.of(&self.first, retry)));
        }
        if mark.switched == 0 {
            if !self.end.reached(retry, now)
                && let Some(d) = self.first.staged(retry, (now, first), leaf)
            {
                return Some(d);
            }
            // The first stage is over: this retry is the second's first.
            *mark = Mark::new(retry, now);
        }
        let own = retry.saturating_sub(mark.switched).saturating_add(1);
        if own == 1 {
            leaf.previous = None;
        }
        self.then.staged(own, (mark.since(now), then), leaf)
    }
}

impl<A, B> Chain<A, B> {
    /// The second stage's own retry number of `retry`, if it is one
    /// (counted: a chain ending by time is in its first stage without a
    /// call).
    #[inline]
    fn own(&self, retry: u32) -> Option<u32> {
        match self.end {
            End::Times(n) if retry > n => Some(retry - n),
            _ => None,
        }
    }
}

/// A list of delays: retry `k` waits the `k`-th, and the last repeats.
///
/// [`max_delay`](Strategy::max_delay) is the largest of them. An empty
/// list waits zero.
///
/// # Examples
///
/// ```
/// use backoff_runtime::{Policy, strategy::Steps};
/// use std::time::Duration;
///
/// const S: Duration = Duration::from_secs(1);
/// static POLICY: Policy<Steps> = Policy::from_strategy(Steps::new(&[S, S.saturating_mul(5), S.saturating_mul(30)]))
///     .attempts(6);
/// let secs: Vec<u64> = POLICY.delays().map(|d| d.as_secs()).collect();
/// assert_eq!(secs, [1, 5, 30, 30, 30]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steps {
    delays: &'static [Duration],
    largest: Duration,
}

impl Steps {
    /// Waits `delays[k − 1]` before retry `k`, the last from then on.
    pub const fn new(delays: &'static [Duration]) -> Self {
        let mut largest = Duration::ZERO;
        let mut i = 0;
        while i < delays.len() {
            if delays[i].as_nanos() > largest.as_nanos() {
                largest = delays[i];
            }
            i += 1;
        }
        Steps { delays, largest }
    }
}

impl Strategy for Steps {
    ignores_previous!();
    caps_its_own_delays!();

    #[inline]
    fn delay(&self, retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
        let Some(last) = self.delays.len().checked_sub(1) else {
            return Duration::ZERO;
        };
        let index = usize::try_from(retry.saturating_sub(1)).unwrap_or(usize::MAX);
        self.delays[index.min(last)]
    }

    /// The largest of the delays.
    #[inline]
    fn max_delay(&self) -> Duration {
        self.largest
    }
}

/// Combines two stages' delays retry by retry; `A` and `B` are the stages.
macro_rules! pairwise {
    ($($(#[$doc:meta])* $name:ident, $combine:path, $either:literal, $max_doc:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $name<A, B> {
            a: A,
            b: B,
        }

        impl<A, B> $name<A, B> {
            /// Combines `a`'s and `b`'s delay of each retry (see the
            /// type's example).
            pub const fn new(a: A, b: B) -> Self {
                $name { a, b }
            }
        }

        impl<A: Strategy, B: Strategy> Strategy for $name<A, B> {
            caps_its_own_delays!();
            ignores_previous!();

            /// Each stage's delay from scratch: the previous delay was the
            /// combination's, not a stage's own.
            #[inline]
            fn delay(
                &self,
                retry: u32,
                _previous: Option<Duration>,
                rng: &mut JitterRng,
            ) -> Duration {
                $combine(
                    self.a.capped_delay(retry, None, rng),
                    self.b.capped_delay(retry, None, rng),
                )
            }

            #[doc = $max_doc]
            #[inline]
            fn max_delay(&self) -> Duration {
                let (a, b) = (self.a.max_delay(), self.b.max_delay());
                // (A union whose side ends may wait the other side's.)
                if $either && (self.a.staging().ends || self.b.staging().ends) {
                    return a.max(b);
                }
                $combine(a, b)
            }

            fn central_delay(&self, retry: u32) -> Duration {
                $combine(self.a.central_delay(retry), self.b.central_delay(retry))
            }

            #[inline]
            fn staging(&self) -> Staging {
                let (a, b) = (self.a.staging(), self.b.staging());
                // (A union ends once both sides have.)
                let ends = if $either { a.ends && b.ends } else { a.ends || b.ends };
                Staging { ends, ..a.and(b) }
            }

            fn staged(&self, retry: u32, (now, marks): At<'_>, leaf: &mut Leaf<'_>) -> Option<Duration> {
                let (a, b) = marks.split_at_mut(self.a.staging().marks.min(marks.len()));
                leaf.previous = None;
                let a = self.a.staged(retry, (now, a), leaf);
                leaf.previous = None;
                let b = self.b.staged(retry, (now, b), leaf);
                match (a, b) {
                    (Some(a), Some(b)) => Some($combine(a, b)),
                    // (Once one side has ended: the other's, or the end.)
                    (Some(d), None) | (None, Some(d)) if $either => Some(d),
                    _ => None,
                }
            }
        }
    )*};
}

pairwise! {
    /// The smaller of two schedules' delays, retry by retry: a cap that
    /// is itself a schedule.
    ///
    /// The previous delay was the combination's, not a stage's own, so
    /// neither stage is given one: a stage that reads it (such as
    /// [`Decorrelated`](super::Decorrelated)) draws each delay as if it
    /// were its first. The attribute refuses one.
    ///
    /// With sides that end ([`Stage`](super::Stage)), it continues while
    /// either side does, with the other side's delay once one has ended
    /// (Effect's `union`), and ends when both have.
    ///
    /// # Examples
    ///
    /// ```
    /// use backoff_runtime::{Policy, strategy::{Linear, Shorter, Exponential}};
    /// use std::time::Duration;
    ///
    /// let s = Duration::from_secs(1);
    /// let policy = Policy::from_strategy(Shorter::new(
    ///     Exponential::new(s).max_delay(Duration::from_secs(60)),
    ///     Linear::new(s.saturating_mul(3)).max_delay(Duration::from_secs(60)),
    /// ))
    /// .attempts(6);
    /// let secs: Vec<u64> = policy.delays().map(|d| d.as_secs()).collect();
    /// assert_eq!(secs, [1, 2, 4, 8, 15]);
    /// ```
    Shorter, Duration::min, true,
        "The smaller of the two stages' maxima (the larger, if a side ends).";
    /// The larger of two schedules' delays, retry by retry: a floor that
    /// is itself a schedule.
    ///
    /// Neither stage is given the previous delay (see [`Shorter`]).
    ///
    /// With sides that end ([`Stage`](super::Stage)), it ends when either
    /// side ends (Effect's `intersect`): the call gives up, with
    /// [`GiveUpReason::Attempts`](crate::GiveUpReason::Attempts).
    ///
    /// # Examples
    ///
    /// ```
    /// use backoff_runtime::{Policy, strategy::{Constant, Exponential, Longer}};
    /// use std::time::Duration;
    ///
    /// let policy = Policy::from_strategy(Longer::new(
    ///     Exponential::new(Duration::from_millis(100)),
    ///     Constant::new(Duration::from_millis(300)),
    /// ))
    /// .attempts(5);
    /// let ms: Vec<u128> = policy.delays().map(|d| d.as_millis()).collect();
    /// assert_eq!(ms, [300, 300, 400, 800]);
    /// ```
    Longer, Duration::max, false,
        "The larger of the two stages' maxima.";
    /// The sum of two schedules' delays, retry by retry, saturating: a
    /// fixed part plus a growing one.
    ///
    /// Neither stage is given the previous delay (see [`Shorter`]); it
    /// ends when either stage ends, as [`Longer`] does.
    ///
    /// # Examples
    ///
    /// The essay's `3 + 2ᵏ` minutes:
    ///
    /// ```
    /// use backoff_runtime::{Policy, strategy::{Constant, Exponential, Sum}};
    /// use std::time::Duration;
    ///
    /// const MIN: Duration = Duration::from_secs(60);
    /// static POLICY: Policy<Sum<Constant, Exponential>> = Policy::from_strategy(Sum::new(
    ///     Constant::new(MIN.saturating_mul(3)),
    ///     Exponential::new(MIN.saturating_mul(2)).max_delay(Duration::from_secs(3600)),
    /// ))
    /// .attempts(5);
    /// let minutes: Vec<u64> = POLICY.delays().map(|d| d.as_secs() / 60).collect();
    /// assert_eq!(minutes, [5, 7, 11, 19]);
    /// ```
    Sum, Duration::saturating_add, false,
        "Both stages' maxima added, saturating.";
}

#[cfg(test)]
mod tests {
    use super::super::{
        Constant, Decorrelated, Exponential, Fibonacci, Immediate, Linear, Sidekiq, Stage,
    };
    use super::*;
    use crate::{Jitter, Policy};
    use proptest::strategy::Strategy as _;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn ms<S: Strategy>(policy: &Policy<S>) -> Vec<u128> {
        policy.delays().map(|d| d.as_millis()).collect()
    }

    #[test]
    fn a_chain_starts_its_second_stage_at_its_own_first_retry() {
        let chain = Chain::new(
            Exponential::new(MS(100)),
            3,
            Linear::new(MS(1000)).max_delay(MS(2500)),
        );
        assert_eq!(
            ms(&Policy::from_strategy(chain).attempts(8)),
            [100, 200, 400, 1000, 2000, 2500, 2500]
        );
        assert_eq!(chain.max_delay(), Duration::from_secs(10));
        assert_eq!(chain.central_delay(4), MS(1000));
        assert_eq!(chain.central_delay(2), MS(200));
    }

    #[test]
    fn nested_chains_make_more_stages() {
        let chain = Chain::new(
            Immediate,
            2,
            Chain::new(Constant::new(MS(50)), 2, Fibonacci::new(MS(100))),
        );
        assert_eq!(
            ms(&Policy::from_strategy(chain).attempts(9)),
            [0, 0, 50, 50, 100, 100, 200, 300]
        );
        let none_first = Chain::new(Constant::new(MS(7)), 0, Constant::new(MS(9)));
        assert_eq!(ms(&Policy::from_strategy(none_first)), [9, 9]);
    }

    #[test]
    fn decorrelated_in_a_chain_reads_its_own_previous_delay() {
        let base = MS(100);
        let chain = Chain::new(
            Constant::new(Duration::from_secs(5)),
            2,
            Decorrelated::new(base).max_delay(Duration::from_secs(60)),
        );
        assert!(chain.reads_previous());
        let policy = Policy::from_strategy(chain).attempts(30).seed(3);
        let delays: Vec<Duration> = policy.delays().collect();
        assert_eq!(delays[..2], [Duration::from_secs(5); 2]);
        // Its first retry draws from base to 3 · base, not 3 · 5 s.
        assert!(delays[2] >= base && delays[2] <= 3 * base, "{delays:?}");
        for w in delays[2..].windows(2) {
            assert!(w[1] >= base && w[1] <= 3 * w[0], "{delays:?}");
        }
        assert!(!Chain::new(Immediate, 1, Constant::new(MS(1))).reads_previous());
    }

    #[test]
    fn steps_repeat_the_last_and_cap_at_the_largest() {
        static STEPS: Steps = Steps::new(&[
            Duration::from_secs(1),
            Duration::from_secs(30),
            Duration::from_secs(5),
        ]);
        assert_eq!(
            ms(&Policy::from_strategy(STEPS).attempts(6)),
            [1000, 30_000, 5000, 5000, 5000]
        );
        assert_eq!(STEPS.max_delay(), Duration::from_secs(30));
        assert_eq!(STEPS.central_delay(0), Duration::from_secs(1));
        assert_eq!(STEPS.central_delay(u32::MAX), Duration::from_secs(5));
        let empty = Steps::new(&[]);
        assert_eq!(ms(&Policy::from_strategy(empty)), [0, 0]);
        assert_eq!(empty.max_delay(), Duration::ZERO);
    }

    #[test]
    fn shorter_longer_and_sum_combine_retry_by_retry() {
        let a = Exponential::new(MS(100)).max_delay(MS(1000));
        let b = Linear::new(MS(250)).max_delay(MS(600));
        let shorter = Shorter::new(a, b);
        assert_eq!(
            ms(&Policy::from_strategy(shorter).attempts(6)),
            [100, 200, 400, 600, 600]
        );
        assert_eq!(shorter.max_delay(), MS(600));
        let longer = Longer::new(a, b);
        assert_eq!(
            ms(&Policy::from_strategy(longer).attempts(6)),
            [250, 500, 600, 800, 1000]
        );
        assert_eq!(longer.max_delay(), MS(1000));
        let sum = Sum::new(a, b);
        assert_eq!(
            ms(&Policy::from_strategy(sum).attempts(6)),
            [350, 700, 1000, 1400, 1600]
        );
        assert_eq!(sum.max_delay(), MS(1600));
        assert_eq!(sum.central_delay(3), MS(1000));
        assert!(!sum.reads_previous());
        let huge = Sum::new(Constant::new(Duration::MAX), Constant::new(Duration::MAX));
        assert_eq!(huge.max_delay(), Duration::MAX);
        assert_eq!(
            ms(&Policy::from_strategy(huge).attempts(2))[0],
            Duration::MAX.as_millis()
        );
    }

    #[test]
    fn spread_reads_the_composed_schedule() {
        let chain = Chain::new(Constant::new(MS(100)), 2, Constant::new(MS(1000)));
        let policy = Policy::from_strategy(chain)
            .jitter(Jitter::Spread)
            .attempts(6)
            .seed(9);
        for (k, d) in policy.delays().enumerate() {
            assert!(d <= MS(1000), "{k}: {d:?}");
        }
        let d = policy.delay_for(4, 7).expect("retry 4 of 6 attempts");
        assert!(d >= MS(100) && d <= MS(1000), "{d:?}");
        // Random stages spread around their mean.
        let random = Sum::new(Sidekiq::new(), Constant::new(MS(1)));
        assert_eq!(random.central_delay(1), Duration::from_secs(30) + MS(1));
    }

    const S: fn(u64) -> Duration = Duration::from_secs;

    fn secs<S: Strategy>(policy: Policy<S>) -> Vec<u64> {
        let policy = policy.jitter(Jitter::None);
        policy.delays().map(|d| d.as_secs()).collect()
    }

    #[test]
    fn a_stage_for_a_time_ends_at_the_first_failure_once_it_has_passed() {
        // (`delays`: instant failures, so the time is the delays' sum.)
        let chain = Chain::lasting(Constant::new(S(1)), S(3), Constant::new(S(60)));
        assert_eq!(
            secs(Policy::from_strategy(chain).attempts(6)),
            [1, 1, 1, 60, 60]
        );
        assert_eq!(chain.staging().marks, 1);
        // A later stage's time counts from its own start.
        let nested = Chain::lasting(
            Constant::new(S(1)),
            S(3),
            Chain::lasting(Constant::new(S(2)), S(4), Constant::new(S(10))),
        );
        let p = Policy::from_strategy(nested).attempts(8);
        assert_eq!(secs(p), [1, 1, 1, 2, 2, 10, 10]);
        // A count, then a time: the timed stage begins where the count ended.
        let counted = Chain::new(
            Constant::new(S(5)),
            2,
            Chain::lasting(Constant::new(S(1)), S(2), Constant::new(S(7))),
        );
        assert_eq!(counted.staging().marks, 2);
        assert_eq!(
            secs(Policy::from_strategy(counted).attempts(6)),
            [5, 5, 1, 1, 7]
        );
        // Without a call, the first stage.
        assert_eq!(chain.central_delay(9), S(1));
        assert_eq!(
            Chain::new(Immediate, 2, Constant::new(S(1))).staging(),
            Staging::default()
        );
    }

    #[test]
    fn shorter_is_a_union_and_longer_an_intersection() {
        let (one, five) = (Constant::new(S(1)), Constant::new(S(5)));
        let union = Shorter::new(Stage::times(one, 3), five);
        assert_eq!(
            secs(Policy::from_strategy(union).attempts(7)),
            [1, 1, 1, 5, 5, 5]
        );
        let both_end = Shorter::new(Stage::times(one, 2), Stage::times(five, 3));
        assert_eq!(
            secs(Policy::from_strategy(both_end).unlimited_attempts()),
            [1, 1, 5]
        );
        let intersection = Longer::new(Stage::times(one, 3), Constant::new(S(2)));
        assert_eq!(
            secs(Policy::from_strategy(intersection).unlimited_attempts()),
            [2, 2, 2]
        );
        let timed = Longer::new(Stage::lasting(Constant::new(S(2)), S(5)), one);
        assert_eq!(
            secs(Policy::from_strategy(timed).unlimited_attempts()),
            [2, 2, 2]
        );
        // The call gives up when the schedule ends, reason `Attempts`.
        let policy = Policy::from_strategy(intersection).unlimited_attempts();
        let mut state = policy.start();
        assert_eq!((0..4).filter_map(|_| state.next_delay()).count(), 3);
        assert_eq!(state.give_up_reason(), Some(crate::GiveUpReason::Attempts));
        // A first stage that ends by itself hands over to the second.
        let handed = Chain::new(
            Longer::new(Stage::times(one, 1), five),
            3,
            Constant::new(S(9)),
        );
        assert_eq!(secs(Policy::from_strategy(handed).attempts(4)), [5, 9, 9]);
    }

    #[test]
    fn delay_for_and_spread_read_a_staged_schedule() {
        let chain = Chain::lasting(Constant::new(S(1)), S(3), Constant::new(S(60)));
        let plain = Policy::from_strategy(chain)
            .jitter(Jitter::None)
            .attempts(6);
        let replayed: Vec<u64> = (1..6)
            .map(|k| plain.delay_for(k, 7).unwrap().as_secs())
            .collect();
        assert_eq!(replayed, [1, 1, 1, 60, 60]);
        assert_eq!(plain.delay_for(6, 7), None);
        let spread = plain.jitter(Jitter::Spread);
        for key in 0..50 {
            let d: Vec<Duration> = (1..6).map(|k| spread.delay_for(k, key).unwrap()).collect();
            assert_eq!(
                d,
                (1..6)
                    .map(|k| spread.delay_for(k, key).unwrap())
                    .collect::<Vec<_>>()
            );
            assert!(d.iter().all(|d| *d <= S(60)), "{d:?}");
            assert!(d[..3].iter().all(|d| *d <= S(1)), "{d:?}");
        }
        let ended =
            Policy::from_strategy(Stage::times(Constant::new(S(1)), 2)).unlimited_attempts();
        assert_eq!(ended.delay_for(3, 1), None);
        assert!(ended.delay_for(2, 1).is_some());
    }

    static ODD_STEPS: [Duration; 3] = [Duration::ZERO, Duration::MAX, Duration::from_secs(3)];

    /// One of every form, nested, with random stages.
    fn every_form() -> impl Strategy {
        static STEPS: Steps = Steps::new(&[Duration::from_secs(1), Duration::MAX]);
        Chain::new(
            Sum::new(Exponential::new(Duration::MAX).factor(3.0), STEPS),
            5,
            Chain::new(
                Longer::new(Decorrelated::new(MS(1)), Fibonacci::new(MS(3))),
                7,
                Shorter::new(Sidekiq::new(), Linear::new(Duration::MAX)),
            ),
        )
    }

    proptest::proptest! {
        #[test]
        fn no_delay_exceeds_max_delay(
            retry in proptest::prop_oneof![0u32..64, proptest::num::u32::ANY, proptest::strategy::Just(u32::MAX)],
            previous in proptest::option::of(proptest::num::u64::ANY.prop_map(Duration::from_nanos)),
            seed in proptest::num::u64::ANY,
            cap_ms in 0u64..100_000,
            times in 0u32..10,
        ) {
            let cap = MS(cap_ms);
            let mut rng = JitterRng::from_seed(seed);
            let every = every_form();
            let forms: [&dyn Strategy; 6] = [
                &Chain::new(Exponential::new(MS(10)).max_delay(cap), times, Decorrelated::new(MS(5)).max_delay(cap)),
                &Steps::new(&ODD_STEPS),
                &Shorter::new(Exponential::new(MS(1)).max_delay(cap), Linear::new(MS(2))),
                &Longer::new(Fibonacci::new(MS(1)).max_delay(cap), Sidekiq::new()),
                &Sum::new(Constant::new(cap), Exponential::new(MS(3)).max_delay(cap)),
                &every,
            ];
            let jitters = [
                Jitter::None,
                Jitter::Full,
                Jitter::Equal,
                Jitter::Scattered(1.0),
                Jitter::Range(0.0, 3.0),
                Jitter::Spread,
            ];
            for s in forms {
                let d = s.delay(retry, previous, &mut rng);
                proptest::prop_assert!(d <= s.max_delay(), "{retry}: {d:?} > {:?}", s.max_delay());
                proptest::prop_assert!(s.central_delay(retry) <= s.max_delay());
                // The policy's step, every jitter: still at most the cap.
                for jitter in jitters {
                    let mut previous = previous;
                    let d = crate::strategy::backoff(s, jitter, retry, &mut previous, &mut rng);
                    proptest::prop_assert!(d <= s.max_delay(), "{jitter:?} {retry}: {d:?}");
                }
            }
        }
    }

    proptest::proptest! {
        /// A schedule with stages that end, nested in every form, stepped
        /// through a call at growing times: never above its cap, under every
        /// jitter, and once ended (`None`) it stays ended.
        #[test]
        fn staged_forms_stay_under_their_cap(
            steps in proptest::collection::vec(0u64..5_000, 1..40),
            seed in proptest::num::u64::ANY,
            times in 0u32..6,
            spread in proptest::bool::ANY,
        ) {
            let staged = Chain::lasting(
                Shorter::new(Stage::times(Exponential::new(MS(10)), times), Sum::new(Constant::new(MS(7)), Linear::new(MS(3)))),
                MS(2_000),
                Chain::new(
                    Longer::new(Stage::lasting(Decorrelated::new(MS(1)), MS(3_000)), Fibonacci::new(MS(2))),
                    times,
                    Chain::lasting(Sidekiq::new(), MS(9_000), Stage::times(Constant::new(MS(5)), 50)),
                ),
            );
            proptest::prop_assert_eq!(staged.staging().marks, 3);
            let jitter = if spread { Jitter::Spread } else { Jitter::Full };
            let policy = Policy::from_strategy(staged).jitter(jitter).unlimited_attempts();
            let (mut previous, mut marks, mut now) = (None, [Mark::default(); 4], Duration::ZERO);
            let mut rng = JitterRng::from_seed(seed);
            let mut ended = false;
            for (k, step) in (1..).zip(steps) {
                let stages: (&dyn Fn() -> Duration, _) = (&move || now, &mut marks[..]);
                match policy.backoff_at(k, &mut previous, &mut rng, stages) {
                    Some(d) => {
                        proptest::prop_assert!(!ended, "{k}: resumed");
                        proptest::prop_assert!(d <= staged.max_delay(), "{k}: {d:?}");
                        now += d + MS(step);
                    }
                    None => ended = true,
                }
            }
        }
    }

    #[test]
    fn every_form_survives_the_last_retries() {
        let s = every_form();
        let policy = Policy::from_strategy(&s).jitter(Jitter::Full).seed(1);
        let mut rng = JitterRng::from_seed(4);
        for retry in (u32::MAX - 3..=u32::MAX).chain(0..20) {
            let d = s.delay(retry, Some(Duration::MAX), &mut rng);
            assert!(d <= s.max_delay());
        }
        assert_eq!(policy.delays().count(), 2);
        let spread = policy.jitter(Jitter::Spread).unlimited_attempts();
        let d = spread
            .delay_for(u32::MAX, u64::MAX)
            .expect("unlimited attempts");
        assert!(d <= s.max_delay());
    }
}
