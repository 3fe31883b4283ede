//! Job systems: the delay before retry `k` of a job, as one stateless call,
//! and the arithmetic of [`Jitter::Spread`].
//!
//! A durable job queue keeps a job's attempt count in a table and nothing
//! else of its retries. [`Policy::delay_for`] gives the delay before its
//! next run from that count and the job's key alone:
//!
//! ```
//! use backoff_runtime::{Jitter, Policy, strategy::Sidekiq};
//!
//! let policy = Policy::from_strategy(Sidekiq::new()).jitter(Jitter::Spread).attempts(26);
//! // A job that failed its third attempt: retry 3 of job 12_345.
//! let wait = policy.delay_for(3, 12_345).unwrap();
//! assert_eq!(policy.delay_for(3, 12_345), Some(wait)); // stateless, deterministic
//! assert_eq!(policy.delay_for(26, 12_345), None); // the 26th attempt was the last
//! ```

use core::time::Duration;

use crate::jitter::{Jitter, JitterRng};
use crate::policy::Policy;
use crate::strategy::{MAX_MARKS, Mark, Strategy};

/// How many retries [`Policy::delay_for`] replays, at most, for a strategy
/// whose delays depend on the previous one.
pub(crate) const REPLAY_WINDOW: u32 = 4096;

/// The golden-ratio increment: `2⁶⁴ / φ`, odd.
pub(crate) const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finalizer: 64 well-mixed bits from any 64 bits (a
/// bijection, so distinct inputs give distinct outputs).
#[inline]
pub(crate) const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The [`Jitter::Spread`] phase of job `key`, in `1 ..= u32::MAX` (the
/// fraction `phase / 2³²`).
///
/// The golden-ratio sequence: the keys' phases are `key · (1/φ)` modulo 1.
/// Sequential keys (0, 1, 2, …) get the most even phases any sequence
/// gives (any n consecutive keys cut `[0, 1)` into gaps of at most three
/// lengths, the longest under 2.7/n), and keys of any other pattern still
/// get phases spread over `[0, 1)`.
#[inline]
pub(crate) const fn phase_of(key: u64) -> u32 {
    let phase = (key.wrapping_mul(GOLDEN_GAMMA) >> 32) as u32;
    if phase == 0 { 1 } else { phase }
}

/// The generator of retry `retry` of job `key`: its own seed, and the
/// job's phase.
#[inline]
const fn rng_of(key: u64, retry: u32) -> JitterRng {
    let seed = mix64(mix64(key) ^ (retry as u64).wrapping_mul(GOLDEN_GAMMA));
    JitterRng::from_seed(seed).with_phase(phase_of(key))
}

impl<S: Strategy> Policy<S> {
    /// The delay before retry `retry` (1 = the retry after the first failed
    /// attempt) of the job `key`, computed without state: for job queues
    /// that store only an attempt count.
    ///
    /// - The same `(retry, key)` always gives the same delay, in any
    ///   process: every draw (jitter, a random strategy) is seeded from
    ///   them, and [`seed`](Policy::seed) plays no part.
    /// - `key` is any `u64` that identifies the job, such as its id; it is
    ///   mixed, so sequential ids work (different jobs draw independently),
    ///   and under [`Jitter::Spread`] the job's phase comes from it alone,
    ///   the same for each of its retries: sequential ids get the most even
    ///   phases.
    /// - `None` past the attempt limit: retry `k` follows attempt `k`,
    ///   so it exists while `k` is below [`attempts`](Policy::attempts).
    ///   `None` for `retry` 0 too, which is no retry, and with
    ///   [`stop_at_delay`](Policy::stop_at_delay), when this retry's own
    ///   delay before jitter reaches it (the rule a call applies, for a
    ///   schedule that never shrinks).
    /// - A strategy whose delay depends on the previous one
    ///   ([`decorrelated`](Policy::decorrelated)) is replayed from the key:
    ///   the delay is the one a loop drawing retry `j`'s numbers from
    ///   `(key, j)` would reach. Past 4,096 retries the replay
    ///   starts that many retries back, from the cap (for `decorrelated`
    ///   the same delay whenever the chain reached its cap in those
    ///   retries: it never again differs from a chain started above it).
    /// - A schedule whose stages end ([`Stage`](crate::strategy::Stage),
    ///   [`Chain::lasting`](crate::strategy::Chain::lasting)) is replayed
    ///   as a call whose attempts fail at once, its time the sum of the
    ///   delays before (at most 4,096 retries back); `None`
    ///   once it has ended.
    /// - The result is at most the strategy's maximum, for any input.
    ///
    /// It reads the strategy, the jitter and the attempt limit; the
    /// deadline ([`max_elapsed`](Policy::max_elapsed)), the throttled
    /// schedule and the [`kinds`](Policy::kinds) belong to a call in
    /// progress and are not applied.
    ///
    /// # Examples
    ///
    /// A worker that claimed a job which failed its `attempts`-th run
    /// reschedules it, or moves it to the dead set:
    ///
    /// ```
    /// use backoff_runtime::{Jitter, Policy};
    /// use std::time::Duration;
    ///
    /// let policy = Policy::exponential(Duration::from_secs(1))
    ///     .max_delay(Duration::from_secs(60))
    ///     .jitter(Jitter::Spread)
    ///     .attempts(5);
    /// let job_id: u64 = 41;
    /// let mut waits = Vec::new();
    /// for attempts in 1.. {
    ///     match policy.delay_for(attempts, job_id) {
    ///         Some(delay) => waits.push(delay), // run_at = now + delay
    ///         None => break,                    // the dead set
    ///     }
    /// }
    /// assert_eq!(waits.len(), 4);
    /// assert!(waits.windows(2).all(|w| w[0] <= w[1]));
    /// assert!(waits.iter().all(|w| *w <= Duration::from_secs(60)));
    /// ```
    ///
    /// Sequential ids retry one after another, not all at once:
    ///
    /// ```
    /// use backoff_runtime::{Jitter, Policy};
    /// use std::time::Duration;
    ///
    /// let policy = Policy::constant(Duration::from_secs(100)).jitter(Jitter::Spread).attempts(3);
    /// let mut firsts: Vec<u64> = (1..=10).map(|id| policy.delay_for(1, id).unwrap().as_secs()).collect();
    /// firsts.sort();
    /// // Ten ids, one first retry in each tenth of the window.
    /// for (tenth, secs) in firsts.iter().enumerate() {
    ///     assert_eq!(*secs / 10, tenth as u64);
    /// }
    /// ```
    pub fn delay_for(&self, retry: u32, key: u64) -> Option<Duration> {
        if retry == 0 || !self.settings().allows_retry_after(retry) {
            return None;
        }
        let strategy = self.strategy();
        let mut previous = None;
        if strategy.staging().is_staged() {
            return self.staged_delay_for(retry, key);
        }
        if strategy.reads_previous() && !matches!(self.jitter_kind(), Jitter::Spread) {
            let first = if retry > REPLAY_WINDOW {
                previous = Some(strategy.max_delay());
                retry - REPLAY_WINDOW
            } else {
                1
            };
            for j in first..retry {
                let raw = strategy.capped_delay(j, previous, &mut rng_of(key, j));
                previous = Some(raw);
            }
        }
        // (With `stop_at_delay`, this retry's own delay is checked: the
        // same rule as a call's for a schedule that never shrinks.)
        self.backoff_within(retry, &mut previous, &mut rng_of(key, retry))
    }
    /// [`delay_for`](Policy::delay_for) of a schedule whose stages end: the
    /// retries before `retry` replayed as a call whose attempts fail at
    /// once (their delays its time), at most `REPLAY_WINDOW` of them.
    #[cold]
    fn staged_delay_for(&self, retry: u32, key: u64) -> Option<Duration> {
        let (mut previous, mut now) = (None, Duration::ZERO);
        let mut marks = [Mark::default(); MAX_MARKS];
        let mut j = retry.saturating_sub(REPLAY_WINDOW).max(1);
        loop {
            let stages: (&dyn Fn() -> Duration, _) = (&move || now, &mut marks[..]);
            let d = self.backoff_at(j, &mut previous, &mut rng_of(key, j), stages)?;
            if j == retry {
                return Some(d);
            }
            (now, j) = (now.saturating_add(d), j + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::{Buckets, Decorrelated, Sidekiq};
    use proptest::prelude::{Just, any, prop_assert, prop_assert_eq, prop_oneof, proptest};
    use proptest::strategy::Strategy as PropStrategy;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn waits<S: Strategy>(policy: &Policy<S>, key: u64, n: u32) -> Vec<Duration> {
        (1..=n).map(|k| policy.delay_for(k, key).unwrap()).collect()
    }

    #[test]
    fn none_past_the_limit_and_for_retry_zero() {
        let p = Policy::exponential(MS(10))
            .jitter(Jitter::Spread)
            .attempts(4);
        assert!(p.delay_for(3, 9).is_some());
        assert_eq!(p.delay_for(4, 9), None);
        assert_eq!(p.delay_for(u32::MAX, 9), None);
        assert_eq!(p.delay_for(0, 9), None);
        let unlimited = p.unlimited_attempts();
        assert!(unlimited.delay_for(u32::MAX, 9).is_some());
        assert_eq!(Policy::immediate().attempts(1).delay_for(1, 0), None);
    }

    /// A constant schedule: the first retries of sequential keys fill the
    /// first window evenly, and every later wait is the delay itself.
    #[test]
    fn constant_spread_staggers_the_first_retry_only() {
        let p = Policy::constant(MS(1000))
            .jitter(Jitter::Spread)
            .attempts(5);
        let mut firsts: Vec<u128> = (0..100u64)
            .map(|key| p.delay_for(1, key).unwrap().as_millis())
            .collect();
        firsts.sort_unstable();
        // No gap in the window longer than 2.7 hundredths of it (the
        // phases' own bound), the ends included.
        assert!(firsts[0] <= 27 && firsts[99] >= 1000 - 27, "{firsts:?}");
        assert!(firsts.windows(2).all(|w| w[1] - w[0] <= 27), "{firsts:?}");
        assert!(firsts[99] < 1000);
        for key in 0..100 {
            assert_eq!(&waits(&p, key, 4)[1..], [MS(1000); 3]);
        }
    }

    /// Sidekiq: the waits blend the means around each retry, and retry k
    /// of every job lands in `[S(k − ½), S(k + ½))` of the mean schedule.
    #[test]
    fn sidekiq_windows_tile_the_mean_schedule() {
        let s = Sidekiq::new();
        let p = Policy::from_strategy(s).jitter(Jitter::Spread).attempts(26);
        let mean: Vec<f64> = (1..=26).map(|k| s.central_delay(k).as_secs_f64()).collect();
        let sum = |x: f64| -> f64 {
            let whole = x.floor() as usize;
            mean[..whole].iter().sum::<f64>() + (x - x.floor()) * mean[whole]
        };
        for key in 0..200u64 {
            let mut t = 0.0;
            for (k, w) in waits(&p, key, 25).iter().enumerate() {
                t += w.as_secs_f64();
                let k = k as f64 + 1.0;
                assert!(
                    t >= sum(k - 0.5) - 1e-3 && t <= sum(k + 0.5) + 1e-3,
                    "key {key} retry {k}: {t}"
                );
            }
        }
    }

    #[test]
    fn decorrelated_is_replayed_from_the_key() {
        let p = Policy::decorrelated(MS(10))
            .max_delay(MS(5000))
            .attempts(50);
        for key in [0u64, 1, 99, u64::MAX] {
            // The chain a loop drawing retry j's numbers from (key, j) runs.
            let s = Decorrelated::new(MS(10)).max_delay(MS(5000));
            let mut previous = None;
            for k in 1..50 {
                let d = s.delay(k, previous, &mut rng_of(key, k));
                previous = Some(d);
                assert_eq!(p.delay_for(k, key), Some(d), "key {key} retry {k}");
            }
        }
        assert_ne!(waits(&p, 1, 20), waits(&p, 2, 20));
    }

    /// Past the replay window the replay starts from the cap, and agrees
    /// with the whole chain once that has reached it.
    #[test]
    fn a_long_replay_agrees_with_the_whole_chain() {
        let s = Decorrelated::new(MS(10)).max_delay(MS(100));
        let p = Policy::from_strategy(s).unlimited_attempts();
        for key in 0..20u64 {
            let mut previous = None;
            let mut whole = Duration::ZERO;
            for k in 1..=REPLAY_WINDOW + 50 {
                whole = s.delay(k, previous, &mut rng_of(key, k));
                previous = Some(whole);
            }
            assert_eq!(p.delay_for(REPLAY_WINDOW + 50, key), Some(whole));
        }
        // Any retry, no panic, within the cap.
        assert!(p.delay_for(u32::MAX, 7).unwrap() <= MS(100));
    }

    #[test]
    fn decorrelated_spreads_around_its_mid_range_chain() {
        let s = Decorrelated::new(MS(100)).max_delay(Duration::from_secs(60));
        let chain: Vec<u128> = (1..=4).map(|k| s.central_delay(k).as_millis()).collect();
        assert_eq!(chain, [200, 350, 575, 912]); // 912.5 ms
        let p = Policy::from_strategy(s).jitter(Jitter::Spread).attempts(6);
        for key in 0..50 {
            let w = waits(&p, key, 5);
            assert!(w.windows(2).all(|w| w[0] <= w[1]), "{w:?}");
            // Retry 3 blends c(2), c(3), c(4).
            assert!(w[2] >= MS(350) && w[2] <= MS(913), "{w:?}");
        }
    }

    #[test]
    fn extreme_inputs_never_panic() {
        let policies = [
            Policy::exponential(Duration::MAX).max_delay(Duration::MAX),
            Policy::linear(Duration::MAX).max_delay(Duration::MAX),
            Policy::fibonacci(Duration::from_nanos(1)).max_delay(Duration::MAX),
            Policy::constant(Duration::MAX),
            Policy::decorrelated(Duration::MAX).max_delay(Duration::MAX),
            Policy::immediate(),
        ];
        let jitters = [
            Jitter::None,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Scattered(1.0),
            Jitter::Spread,
        ];
        for p in policies {
            for j in jitters {
                let p = p.jitter(j).unlimited_attempts();
                for retry in [1, 2, 3, 94, 1 << 20, u32::MAX - 1, u32::MAX] {
                    for key in [0, 1, u64::MAX] {
                        let d = p.delay_for(retry, key).unwrap();
                        assert!(d <= p.strategy().max_delay());
                    }
                }
            }
        }
        let s = Policy::from_strategy(Sidekiq::new()).jitter(Jitter::Spread);
        assert!(s.unlimited_attempts().delay_for(u32::MAX, 3).is_some());
        let b = Policy::from_strategy(Buckets::new()).jitter(Jitter::Spread);
        assert!(b.unlimited_attempts().delay_for(u32::MAX, 3).is_some());
    }

    /// The phases of n sequential keys leave no gap in `[0, 1)` longer
    /// than 2.7/n (the three-distance theorem for the golden ratio).
    #[test]
    fn sequential_keys_get_even_phases() {
        for start in [0u64, 1, 1000, 1 << 40, u64::MAX - 5000] {
            for n in [10u64, 100, 1000] {
                let mut phases: Vec<f64> = (0..n)
                    .map(|i| f64::from(phase_of(start.wrapping_add(i))) / 4_294_967_296.0)
                    .collect();
                phases.sort_by(f64::total_cmp);
                let mut widest = 1.0 - phases[n as usize - 1] + phases[0];
                for w in phases.windows(2) {
                    widest = f64::max(widest, w[1] - w[0]);
                }
                assert!(widest < 2.7 / n as f64, "{start} {n}: {widest}");
            }
        }
    }

    /// Deterministic strategies: the spread first retries of keys whose
    /// phases cover `[0, 1)` cover the first window.
    #[test]
    fn the_loop_and_delay_for_agree_on_a_phase() {
        let p = Policy::exponential(MS(100))
            .max_delay(MS(3000))
            .jitter(Jitter::Spread)
            .attempts(8);
        for key in 0..30u64 {
            let mut rng = JitterRng::from_seed(key).with_phase(phase_of(key));
            let mut previous = None;
            for k in 1..8 {
                let looped = p.backoff(k, &mut previous, &mut rng);
                assert_eq!(p.delay_for(k, key), Some(looped));
            }
        }
    }

    /// What an `async fn` keeps between attempts (`Carried`, 8 bytes) keeps
    /// the phase too: each call's waits are one phase's, and calls differ.
    #[cfg(feature = "std")]
    #[test]
    fn the_compact_state_keeps_its_phase() {
        use crate::state::Carried;
        let p = Policy::linear(MS(10))
            .max_delay(Duration::from_secs(1))
            .jitter(Jitter::Spread)
            .attempts(8);
        assert_eq!(size_of::<Carried<[Option<Duration>; 0]>>(), 8);
        let mut firsts = Vec::new();
        for _ in 0..50 {
            let mut carried = Carried::<[Option<Duration>; 0]>::NEW;
            let waits: Vec<Duration> =
                core::iter::from_fn(|| p.next_carried(&mut carried)).collect();
            assert_eq!(waits.len(), 7);
            assert!(waits.windows(2).all(|w| w[0] <= w[1]), "{waits:?}");
            // One phase: the wait before retry k is (1 − p)·w(k − 1) + p·w(k),
            // w(k) = 10·k + 5 ms, so it grows by exactly 10 ms from retry 2 on.
            for w in waits[1..].windows(2) {
                assert!(
                    (w[1] - w[0]).abs_diff(MS(10)) <= Duration::from_nanos(2),
                    "{waits:?}"
                );
            }
            firsts.push(waits[0]);
        }
        firsts.sort();
        firsts.dedup();
        assert!(firsts.len() > 40, "{firsts:?}");
    }

    fn any_jitter() -> impl PropStrategy<Value = Jitter> {
        prop_oneof![
            Just(Jitter::None),
            Just(Jitter::Full),
            Just(Jitter::Equal),
            (0.01f64..=1.0).prop_map(Jitter::Scattered),
            Just(Jitter::Spread),
        ]
    }

    fn any_policy() -> impl PropStrategy<Value = Policy> {
        let d = || (0u64..=20_000).prop_map(Duration::from_millis);
        (0u8..6, d(), d(), 1.1f64..4.0).prop_map(|(kind, base, max, factor)| match kind {
            0 => Policy::exponential(base).factor(factor).max_delay(max),
            1 => Policy::linear(base).max_delay(max),
            2 => Policy::constant(base).max_delay(max),
            3 => Policy::fibonacci(base).max_delay(max),
            4 => Policy::decorrelated(base).max_delay(max),
            _ => Policy::immediate(),
        })
    }

    proptest! {
        /// Never above the maximum, the same answer twice, `None` exactly
        /// past the limit.
        #[test]
        fn capped_deterministic_and_limited(
            policy in any_policy(),
            jitter in any_jitter(),
            attempts in 1u32..40,
            retry in 0u32..60,
            key in any::<u64>(),
        ) {
            let p = policy.jitter(jitter).attempts(attempts);
            let d = p.delay_for(retry, key);
            prop_assert_eq!(d, p.delay_for(retry, key));
            prop_assert_eq!(d.is_some(), retry >= 1 && retry < attempts);
            if let Some(d) = d {
                prop_assert!(d <= p.strategy().max_delay());
            }
        }

        /// Under spread, no wait is shorter than the job's previous one, and
        /// each stays between the neighbouring central delays.
        #[test]
        fn spread_waits_never_shrink(policy in any_policy(), key in any::<u64>()) {
            let p = policy.jitter(Jitter::Spread).attempts(40);
            let s = p.strategy();
            let w: Vec<Duration> = (1..40).map(|k| p.delay_for(k, key).unwrap()).collect();
            for k in 1..w.len() {
                prop_assert!(w[k - 1] <= w[k], "retry {}: {:?} then {:?}", k + 1, w[k - 1], w[k]);
                let retry = k as u32 + 1;
                let lo = s.central_delay(retry - 1);
                let hi = s.central_delay(retry + 1);
                prop_assert!(w[k] >= lo.saturating_sub(Duration::from_nanos(2)) && w[k] <= hi);
            }
        }
    }
}
