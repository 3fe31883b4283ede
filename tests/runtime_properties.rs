//! Property tests of the runtime without the attribute: the schedule of
//! [`Policy::delays`], the [`RetryState`] state machine, the strategies and
//! the jitter, over random policies (every builtin strategy, zero and huge
//! durations up to `Duration::MAX`, invalid factors and ratios, attempt limits
//! up to `u32::MAX` or unlimited, optional deadline and seed), plus the
//! reference schedules of SPEC.md.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use backoff_runtime::Strategy as Backoff;
use backoff_runtime::{Decision, Jitter, JitterRng, Policy, RetryState};
use proptest::prelude::*;

const MS: fn(u64) -> Duration = Duration::from_millis;

/// The cap of the growing builtin strategies when none is set.
const DEFAULT_MAX: Duration = Duration::from_secs(10);

/// Steps of a schedule or a call examined per case: enough to reach every
/// cap of the generated strategies (fibonacci and exponential reach even
/// `Duration::MAX` from one nanosecond well within it) while keeping the
/// file fast in debug builds.
const STEPS: usize = 96;

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

/// Durations from zero to `Duration::MAX`, biased towards the edges and
/// towards realistic values.
fn duration() -> BoxedStrategy<Duration> {
    prop_oneof![
        1 => Just(Duration::ZERO),
        1 => Just(Duration::MAX),
        1 => Just(Duration::from_nanos(1)),
        3 => (0u64..=1_000_000_000).prop_map(Duration::from_nanos),
        4 => (0u64..=3_600_000).prop_map(Duration::from_millis),
        2 => (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
    .boxed()
}

/// Growth factors, valid and invalid (not above 1, not finite).
fn factor() -> BoxedStrategy<f64> {
    prop_oneof![
        4 => 1.0001f64..=10.0,
        1 => Just(1.0),
        1 => Just(0.5),
        1 => Just(0.0),
        1 => Just(-2.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(f64::MAX),
        1 => Just(1.0 + f64::EPSILON),
        1 => any::<f64>(),
    ]
    .boxed()
}

/// Scattered ratios, in range and out of it.
fn ratio() -> BoxedStrategy<f64> {
    prop_oneof![
        4 => 0.0f64..=1.0,
        1 => Just(1.0),
        1 => Just(0.0),
        1 => Just(1e-300),
        1 => Just(-0.5),
        1 => Just(1.5),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => any::<f64>(),
    ]
    .boxed()
}

fn jitter() -> BoxedStrategy<Jitter> {
    prop_oneof![
        Just(Jitter::None),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        ratio().prop_map(Jitter::Scattered),
        (0.0f32..2.0, 0.0f32..2.0).prop_map(|(a, b)| Jitter::Range(a.min(b), a.max(b))),
    ]
    .boxed()
}

/// Attempt limits: `Some(n)` with `1 ≤ n ≤ u32::MAX`, or `None` (unlimited).
fn attempts() -> BoxedStrategy<Option<u32>> {
    prop_oneof![
        4 => (1u32..=12).prop_map(Some),
        1 => (1u32..=u32::MAX).prop_map(Some),
        1 => Just(Some(u32::MAX)),
        1 => Just(Some(u32::MAX - 1)),
        2 => Just(None),
    ]
    .boxed()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Exponential,
    Linear,
    Constant,
    Fibonacci,
    Decorrelated,
    Immediate,
}

fn kind() -> BoxedStrategy<Kind> {
    prop_oneof![
        Just(Kind::Exponential),
        Just(Kind::Linear),
        Just(Kind::Constant),
        Just(Kind::Fibonacci),
        Just(Kind::Decorrelated),
        Just(Kind::Immediate),
    ]
    .boxed()
}

/// Everything a policy is built from, kept so that expectations can be
/// computed from the inputs rather than read back from the policy.
#[derive(Debug, Clone, Copy)]
struct Spec {
    kind: Kind,
    base: Duration,
    factor: Option<f64>,
    max: Option<Duration>,
    jitter: Option<Jitter>,
    attempts: Option<u32>,
    max_elapsed: Option<Duration>,
    seed: Option<u64>,
}

impl Spec {
    fn build(&self) -> Policy {
        let mut p = match self.kind {
            Kind::Exponential => Policy::exponential(self.base),
            Kind::Linear => Policy::linear(self.base),
            Kind::Constant => Policy::constant(self.base),
            Kind::Fibonacci => Policy::fibonacci(self.base),
            Kind::Decorrelated => Policy::decorrelated(self.base),
            Kind::Immediate => Policy::immediate(),
        };
        // `factor` is documented to be ignored by every strategy but the
        // exponential one: apply it to all of them.
        if let Some(f) = self.factor {
            p = p.factor(f);
        }
        if let Some(max) = self.max {
            p = p.max_delay(max);
        }
        if let Some(j) = self.jitter {
            p = p.jitter(j);
        }
        p = match self.attempts {
            Some(n) => p.attempts(n),
            None => p.unlimited_attempts(),
        };
        if let Some(limit) = self.max_elapsed {
            p = p.max_elapsed(limit);
        }
        if let Some(seed) = self.seed {
            p = p.seed(seed);
        }
        p
    }

    /// The longest sleep the policy may ever grant for `Decision::Retry`,
    /// from the inputs alone: the user's `max` (10 s by default) for the
    /// growing strategies, the user's `max` or none for `constant` (whose
    /// jitter may scatter above the delay), zero for `immediate`.
    fn cap(&self) -> Duration {
        match self.kind {
            Kind::Exponential | Kind::Linear | Kind::Fibonacci | Kind::Decorrelated => {
                self.max.unwrap_or(DEFAULT_MAX)
            }
            Kind::Constant => self.max.unwrap_or(Duration::MAX),
            Kind::Immediate => Duration::ZERO,
        }
    }

    /// The jitter in effect: the one set, else the constructor's default.
    fn effective_jitter(&self) -> Jitter {
        self.jitter.unwrap_or(match self.kind {
            Kind::Decorrelated | Kind::Immediate => Jitter::None,
            _ => Jitter::Full,
        })
    }

    /// The exponential growth factor in effect (invalid factors ignored).
    fn effective_factor(&self) -> f64 {
        match self.factor {
            Some(f) if f.is_finite() && f > 1.0 => f,
            _ => 2.0,
        }
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        kind(),
        duration(),
        proptest::option::of(factor()),
        proptest::option::weighted(0.7, duration()),
        proptest::option::of(jitter()),
        attempts(),
        proptest::option::of(duration()),
        proptest::option::of(any::<u64>()),
    )
        .prop_map(
            |(kind, base, factor, max, jitter, attempts, max_elapsed, seed)| Spec {
                kind,
                base,
                factor,
                max,
                jitter,
                attempts,
                max_elapsed,
                seed,
            },
        )
}

/// A decision on a failed attempt, with the time that attempt took.
fn step() -> BoxedStrategy<(Decision, Duration)> {
    let decision = prop_oneof![
        6 => Just(Decision::Retry),
        3 => duration().prop_map(Decision::RetryAfter),
        1 => Just(Decision::Stop),
    ];
    let work = prop_oneof![
        2 => Just(Duration::ZERO),
        3 => (0u64..=2_000).prop_map(Duration::from_millis),
        1 => duration(),
    ];
    (decision, work).boxed()
}

// ---------------------------------------------------------------------------
// A clock the tests control
// ---------------------------------------------------------------------------

thread_local! {
    /// Virtual time since `origin()`, advanced by the test.
    static NOW: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// Virtual time never goes further than this, so that `Instant` arithmetic
/// cannot overflow even after a `RetryAfter(Duration::MAX)`.
const CLOCK_CAP: Duration = Duration::from_secs(1000 * 365 * 24 * 3600);

fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

fn virtual_clock() -> Instant {
    origin() + NOW.get()
}

fn reset_clock() {
    NOW.set(Duration::ZERO);
}

fn advance(d: Duration) {
    NOW.set(NOW.get().saturating_add(d).min(CLOCK_CAP));
}

fn now() -> Duration {
    NOW.get()
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

fn from_nanos(n: u128) -> Duration {
    let secs = n / 1_000_000_000;
    if secs > u128::from(u64::MAX) {
        return Duration::MAX;
    }
    Duration::new(secs as u64, (n % 1_000_000_000) as u32)
}

/// Float tolerance for bounds computed as `v · x` in `f64`.
fn slack(v: Duration) -> f64 {
    nanos(v) as f64 * 1e-12 + 2.0
}

fn fib(k: u32) -> u128 {
    let (mut a, mut b) = (1u128, 1u128);
    for _ in 1..k {
        (a, b) = (b, a.saturating_add(b));
    }
    a
}

/// Asserts that `d` is a possible result of `jitter` applied to the capped
/// delay `v` under the cap `max`, as SPEC.md and the `Jitter` docs define.
fn assert_jitter_bounds(jitter: Jitter, v: Duration, max: Duration, d: Duration) {
    assert!(d <= max, "{jitter:?} of {v:?} gave {d:?} above max {max:?}");
    let v = v.min(max);
    match jitter {
        Jitter::None => assert_eq!(d, v),
        Jitter::Full => assert!(d <= v, "full jitter of {v:?} gave {d:?}"),
        Jitter::Equal => assert!(
            d >= v / 2 && d <= v,
            "equal jitter of {v:?} gave {d:?}, outside [v/2, v]"
        ),
        // Its waits depend on the whole schedule, not on `v` alone: its
        // bounds are backoff-runtime's `jobs` tests and tests/spread.rs.
        Jitter::Spread => unreachable!("the generators here draw no spread"),
        Jitter::Custom(_) => unreachable!("the generators here draw no jitterer of their own"),
        Jitter::Scattered(r) if r.is_nan() || r <= 0.0 => {
            assert_eq!(d, v, "scattered({r}) is documented as no jitter");
        }
        Jitter::Scattered(r) => {
            let r = r.min(1.0);
            let (vf, df) = (nanos(v) as f64, nanos(d) as f64);
            let lo = vf * (1.0 - r);
            let hi = (vf * (1.0 + r)).min(nanos(max) as f64);
            assert!(
                df >= lo - slack(v) && df <= hi + slack(v),
                "scattered({r}) of {v:?} (max {max:?}) gave {d:?}, outside [{lo}, {hi}] ns"
            );
        }
        Jitter::Range(lo, hi) => {
            let (vf, df) = (nanos(v) as f64, nanos(d) as f64);
            let m = nanos(max) as f64;
            let (lo, hi) = ((vf * f64::from(lo)).min(m), (vf * f64::from(hi)).min(m));
            assert!(
                df >= lo - slack(v) && df <= hi + slack(v),
                "range of {v:?} (max {max:?}) gave {d:?}, outside [{lo}, {hi}] ns"
            );
        }
        _ => unreachable!("a jitter added later ({jitter:?}) needs its bounds here"),
    }
}

/// Wraps a strategy so that the policy's retry `k` asks it for retry
/// `k + skip`: drives the whole policy pipeline (cap, jitter, deadline) at
/// retry counts near `u32::MAX` without iterating billions of times.
#[derive(Debug, Clone, Copy)]
struct Skip<S> {
    inner: S,
    skip: u32,
}

impl<S: Backoff> Backoff for Skip<S> {
    fn delay(&self, retry: u32, previous: Option<Duration>, rng: &mut JitterRng) -> Duration {
        self.inner
            .delay(retry.saturating_add(self.skip), previous, rng)
    }

    fn max_delay(&self) -> Duration {
        self.inner.max_delay()
    }
}

fn take(p: &Policy, n: usize) -> Vec<Duration> {
    p.delays().take(n).collect()
}

fn ms(p: &Policy) -> Vec<u128> {
    p.delays().map(|d| d.as_millis()).collect()
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// (a) "No sleep ever exceeds max": neither the schedule nor the state
    /// machine (for `Decision::Retry`) ever grants more than the cap the user
    /// asked for, whatever the strategy, jitter and attempt count; and the
    /// strategy reports that same cap.
    #[test]
    fn no_retry_delay_exceeds_the_strategy_max(spec in spec()) {
        let policy = spec.build();
        let cap = spec.cap();
        prop_assert_eq!(policy.strategy().max_delay(), cap);

        for (k, d) in policy.delays().take(STEPS).enumerate() {
            prop_assert!(d <= cap, "delays()[{}] = {:?} > cap {:?}", k, d, cap);
        }

        reset_clock();
        let mut state = policy.start_with_clock(virtual_clock);
        for k in 0..STEPS {
            let granted = if k % 2 == 0 {
                state.next_delay()
            } else {
                state.next_delay_for(Decision::Retry)
            };
            match granted {
                Some(d) => prop_assert!(d <= cap, "retry {} slept {:?} > cap {:?}", k + 1, d, cap),
                None => break,
            }
        }
    }

    /// (b) Nothing panics at retry counts near `u32::MAX`: every builtin
    /// strategy (through the policy's own `Strategy`) with any previous
    /// delay, then jittered, stays within the cap.
    #[test]
    fn strategies_do_not_panic_or_exceed_max_near_u32_max(
        spec in spec(),
        near in 0u32..4,
        far in any::<u32>(),
        previous in proptest::option::of(duration()),
        seed in any::<u64>(),
    ) {
        let policy = spec.build();
        let strategy = policy.strategy();
        let max = strategy.max_delay();
        let mut rng = JitterRng::from_seed(seed);
        for retry in [u32::MAX - near, far, 0] {
            let raw = strategy.delay(retry, previous, &mut rng);
            prop_assert!(raw <= max, "delay({}) = {:?} > max {:?}", retry, raw, max);
            let jittered = policy.jitter_kind().apply(raw, max, &mut rng);
            prop_assert!(jittered <= max);
        }
    }

    /// (b) The whole pipeline (schedule, state machine, jitter, deadline)
    /// at retry counts near `u32::MAX`, and with attempt limits near it.
    #[test]
    fn policies_do_not_panic_at_retry_counts_near_u32_max(
        spec in spec(),
        skip in prop_oneof![Just(u32::MAX), Just(u32::MAX - 1), (u32::MAX - 64)..=u32::MAX],
    ) {
        let policy = spec.build();
        let shifted = Policy::from_strategy(Skip { inner: *policy.strategy(), skip })
            .jitter(policy.jitter_kind())
            .unlimited_attempts()
            .seed(spec.seed.unwrap_or(0));
        let cap = spec.cap();
        for d in shifted.delays().take(32) {
            prop_assert!(d <= cap);
        }
        let mut state = shifted.start_with_clock(virtual_clock);
        for _ in 0..32 {
            let d = state.next_delay();
            prop_assert!(d.is_some_and(|d| d <= cap));
        }

        // The unshifted policy with its own limit: long unlimited schedules
        // keep working too.
        for d in policy.delays().take(STEPS) {
            prop_assert!(d <= cap);
        }
    }

    /// (c) The schedule has `attempts − 1` delays, and the state machine
    /// grants exactly `attempts − 1` retries, when no deadline is set.
    #[test]
    fn schedule_has_attempts_minus_one_delays(
        spec in spec(),
        limit in 1u32..=40,
    ) {
        let spec = Spec { attempts: Some(limit), max_elapsed: None, ..spec };
        let policy = spec.build();
        prop_assert_eq!(policy.attempt_limit(), Some(limit));
        prop_assert_eq!(policy.delays().count(), limit as usize - 1);

        let mut state = policy.start_with_clock(virtual_clock);
        for k in 1..limit {
            prop_assert!(state.next_delay().is_some(), "retry {} of {} refused", k, limit - 1);
            prop_assert_eq!(state.attempt(), k);
        }
        prop_assert_eq!(state.next_delay(), None);
        prop_assert!(state.is_done());
    }

    /// (c) Unlimited attempts without a deadline never end the schedule.
    #[test]
    fn unlimited_schedule_never_ends_without_a_deadline(spec in spec(), n in 0usize..=STEPS) {
        let spec = Spec { attempts: None, max_elapsed: None, ..spec };
        prop_assert_eq!(spec.build().delays().take(n).count(), n);
    }

    /// `max_elapsed` on the schedule: `delays()` is the prefix of the same
    /// (seeded) schedule without deadline whose running total stays within
    /// the deadline, and it ends exactly at the delay that would cross it.
    #[test]
    fn schedule_ends_before_the_delay_that_would_cross_the_deadline(
        spec in spec(),
        limit in duration(),
        seed in any::<u64>(),
    ) {
        let spec = Spec { max_elapsed: Some(limit), seed: Some(seed), ..spec };
        let free = Spec { max_elapsed: None, ..spec }.build();
        let bounded = take(&spec.build(), STEPS);
        let free = take(&free, STEPS);

        prop_assert_eq!(&bounded[..], &free[..bounded.len()]);
        let total = bounded.iter().fold(Duration::ZERO, |t, d| t.saturating_add(*d));
        prop_assert!(total <= limit, "schedule sums to {:?} past the deadline {:?}", total, limit);
        if let Some(next) = free.get(bounded.len()) {
            prop_assert!(
                total.saturating_add(*next) > limit,
                "schedule stopped at {} delays ({:?}) though {:?} more fits in {:?}",
                bounded.len(), total, next, limit
            );
        }
    }

    /// (d) The state machine against a model, on a clock the test controls,
    /// for random sequences of decisions and of time spent in the attempts:
    /// - it never grants a sleep that would end past `max_elapsed`, and
    ///   gives up exactly when the next sleep would;
    /// - it grants at most `attempts − 1` retries;
    /// - `Stop` always gives `None`, `RetryAfter(d)` gives exactly `d`;
    /// - `Retry` gives what the same seeded policy without deadline gives;
    /// - once it has returned `None` it always does;
    /// - the `RetryEvent` reports the failed attempt, the delay and the
    ///   elapsed time on the clock.
    #[test]
    fn retry_state_obeys_deadline_attempts_and_decisions(
        spec in spec(),
        seed in any::<u64>(),
        steps in proptest::collection::vec(step(), 0..48),
    ) {
        let spec = Spec { seed: Some(seed), ..spec };
        let policy = spec.build();
        let free_policy = Spec { max_elapsed: None, ..spec }.build();
        let cap = spec.cap();

        reset_clock();
        let mut state: RetryState<'_> = policy.start_with_clock(virtual_clock);
        let mut free = free_policy.start_with_clock(virtual_clock);
        let mut granted = 0u32;
        let mut given_up = false;

        for (i, &(decision, work)) in steps.iter().enumerate() {
            let failure = i as u32 + 1;
            advance(work);
            let got = state.next_delay_for(decision);
            if given_up {
                prop_assert_eq!(got, None, "a RetryState that gave up granted a retry");
                prop_assert!(state.is_done());
                continue;
            }
            let elapsed = now();
            let within_attempts = spec.attempts.is_none_or(|n| failure < n);

            // Without deadline: Stop, the attempt limit and a `RetryAfter`
            // above `retry_after_max` are the only reasons to give up.
            let unbounded = free.next_delay_for(decision);
            match decision {
                Decision::Stop => prop_assert_eq!(unbounded, None),
                Decision::RetryAfter(d) if within_attempts => prop_assert_eq!(
                    unbounded,
                    Some(d).filter(|&d| d <= free_policy.retry_after_limit())
                ),
                _ if within_attempts => prop_assert!(unbounded.is_some()),
                _ => prop_assert_eq!(unbounded, None),
            }
            if let (Decision::Retry, Some(d)) = (decision, unbounded) {
                prop_assert!(d <= cap);
            }

            let expected = unbounded.filter(|&d| {
                spec.max_elapsed.is_none_or(|limit| elapsed.saturating_add(d) <= limit)
            });
            prop_assert_eq!(
                got, expected,
                "failure {} ({:?}) at elapsed {:?}, deadline {:?}", failure, decision, elapsed,
                spec.max_elapsed
            );

            match got {
                Some(d) => {
                    granted += 1;
                    prop_assert_eq!(state.attempt(), failure);
                    prop_assert!(!state.is_done());
                    let event = state.event(d);
                    prop_assert_eq!(event.attempt, failure);
                    prop_assert_eq!(event.delay, d);
                    prop_assert_eq!(event.elapsed, elapsed);
                    prop_assert_eq!(state.elapsed(), elapsed);
                    advance(d);
                }
                None => {
                    prop_assert!(state.is_done());
                    given_up = true;
                }
            }
        }
        if let Some(n) = spec.attempts {
            prop_assert!(granted < n, "{} retries granted with attempts = {}", granted, n);
        }
    }

    /// (e) A seeded policy reproduces its schedule, in `delays()` and in
    /// every call driven through the state machine, and `delays()` is
    /// exactly what a call sleeps when every attempt fails.
    #[test]
    fn seeded_policies_reproduce_the_same_schedule(spec in spec(), seed in any::<u64>()) {
        let spec = Spec { seed: Some(seed), max_elapsed: None, ..spec };
        let policy = spec.build();
        let again = spec.build();
        let first = take(&policy, STEPS);
        prop_assert_eq!(&first, &take(&policy, STEPS));
        prop_assert_eq!(&first, &take(&again, STEPS));

        for _ in 0..2 {
            let mut state = policy.start_with_clock(virtual_clock);
            let slept: Vec<Duration> =
                std::iter::from_fn(|| state.next_delay()).take(STEPS).collect();
            prop_assert_eq!(&slept, &first);
        }
    }

    /// (f) Without jitter the builtin strategies follow SPEC.md's formulas
    /// exactly (exponential up to float rounding), capped at max; invalid
    /// factors are ignored (factor 2).
    #[test]
    fn unjittered_delays_follow_the_documented_formulas(
        spec in spec().prop_filter("decorrelated is random by itself", |s| s.kind != Kind::Decorrelated),
    ) {
        let spec = Spec {
            jitter: Some(Jitter::None),
            attempts: None,
            max_elapsed: None,
            ..spec
        };
        let cap = spec.cap();
        let base = spec.base;
        for (i, d) in take(&spec.build(), STEPS).into_iter().enumerate() {
            let k = i as u32 + 1;
            match spec.kind {
                Kind::Immediate => prop_assert_eq!(d, Duration::ZERO),
                Kind::Constant => prop_assert_eq!(d, base.min(cap)),
                Kind::Linear => {
                    let want = from_nanos((nanos(base) * u128::from(k)).min(nanos(cap)));
                    prop_assert_eq!(d, want, "linear retry {}", k);
                }
                Kind::Fibonacci => {
                    let want = from_nanos(fib(k).saturating_mul(nanos(base)).min(nanos(cap)));
                    prop_assert_eq!(d, want, "fibonacci retry {}", k);
                }
                Kind::Exponential => {
                    let want = if base.is_zero() {
                        0.0
                    } else {
                        (nanos(base) as f64 * spec.effective_factor().powi(k as i32 - 1))
                            .min(nanos(cap) as f64)
                    };
                    prop_assert!(d <= cap);
                    let got = nanos(d) as f64;
                    prop_assert!(
                        (got - want).abs() <= want * 1e-9 + 1.0,
                        "exponential retry {}: {:?}, want {} ns", k, d, want
                    );
                }
                Kind::Decorrelated => unreachable!(),
            }
        }
    }

    /// (f) Jitter bounds on real schedules: each jittered delay lies in the
    /// documented range around the unjittered delay of the same retry
    /// (full in [0, v], equal in [v/2, v], scattered(r) in
    /// [v(1−r), min(v(1+r), max)]).
    #[test]
    fn jittered_schedules_stay_within_the_jitter_range(
        spec in spec().prop_filter("decorrelated is random by itself", |s| s.kind != Kind::Decorrelated),
        jitter in jitter(),
    ) {
        let spec = Spec { attempts: Some(40), max_elapsed: None, ..spec };
        let raw = full_schedule(Spec { jitter: Some(Jitter::None), ..spec });
        let jittered = full_schedule(Spec { jitter: Some(jitter), ..spec });
        prop_assert_eq!(raw.len(), jittered.len());
        for (v, d) in raw.into_iter().zip(jittered) {
            assert_jitter_bounds(jitter, v, spec.cap(), d);
        }
    }

    /// (f) `Jitter::apply` alone, for any delay and cap: never above the
    /// cap, and within the documented range of the capped delay.
    #[test]
    fn jitter_apply_stays_within_its_range_and_the_cap(
        jitter in jitter(),
        v in duration(),
        max in duration(),
        seed in any::<u64>(),
    ) {
        let mut rng = JitterRng::from_seed(seed);
        for _ in 0..8 {
            let d = jitter.apply(v, max, &mut rng);
            assert_jitter_bounds(jitter, v, max, d);
        }
    }

    /// Decorrelated jitter: each delay is within
    /// [min(base, max), min(max, 3 · previous)], previous starting at base.
    #[test]
    fn decorrelated_stays_between_base_and_three_times_previous(
        base in duration(),
        max in proptest::option::of(duration()),
        seed in any::<u64>(),
    ) {
        let spec = Spec {
            kind: Kind::Decorrelated,
            base,
            factor: None,
            max,
            jitter: None,
            attempts: None,
            max_elapsed: None,
            seed: Some(seed),
        };
        prop_assert_eq!(spec.effective_jitter(), Jitter::None);
        let cap = spec.cap();
        let mut previous = base;
        for d in take(&spec.build(), STEPS) {
            let hi = from_nanos(nanos(previous).saturating_mul(3)).max(base);
            prop_assert!(d >= base.min(cap), "{:?} below base {:?}", d, base);
            prop_assert!(d <= hi.min(cap), "{:?} above min(max, 3 · {:?})", d, previous);
            previous = d;
        }
    }

    /// Invalid factors (not above 1, not finite) are ignored: the schedule
    /// is the factor-2 one.
    #[test]
    fn invalid_factors_are_ignored(
        base in duration(),
        bad in prop_oneof![
            Just(1.0), Just(0.0), Just(-1.0), Just(f64::NAN), Just(f64::INFINITY),
            Just(f64::NEG_INFINITY), -1e9f64..=1.0,
        ],
    ) {
        let two = Policy::exponential(base).jitter(Jitter::None).unlimited_attempts();
        prop_assert_eq!(two.factor(bad), two);
        prop_assert_eq!(take(&two.factor(bad), 40), take(&two.factor(2.0), 40));
    }
}

/// The whole (finite) schedule of `spec`, seeded so that two variants of
/// one spec draw the same random numbers.
fn full_schedule(spec: Spec) -> Vec<Duration> {
    let spec = Spec {
        seed: Some(spec.seed.unwrap_or(7)),
        ..spec
    };
    spec.build().delays().collect()
}

// ---------------------------------------------------------------------------
// Reference schedules (SPEC.md, "Delays")
// ---------------------------------------------------------------------------

#[test]
fn exponential_100ms_doubling_capped_at_600ms() {
    let p = Policy::exponential(MS(100))
        .factor(2.0)
        .max_delay(MS(600))
        .jitter(Jitter::None)
        .attempts(8);
    assert_eq!(ms(&p), [100, 200, 400, 600, 600, 600, 600]);
}

#[test]
fn exponential_factor_one_and_a_half() {
    let p = Policy::exponential(MS(100))
        .factor(1.5)
        .jitter(Jitter::None)
        .attempts(4);
    assert_eq!(ms(&p), [100, 150, 225]);
}

#[test]
fn exponential_default_doubles_up_to_ten_seconds() {
    let p = Policy::exponential(MS(100))
        .jitter(Jitter::None)
        .attempts(10);
    assert_eq!(
        ms(&p),
        [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]
    );
}

#[test]
fn linear_100ms_grows_by_base_and_caps() {
    let p = Policy::linear(MS(100)).jitter(Jitter::None).attempts(8);
    assert_eq!(ms(&p), [100, 200, 300, 400, 500, 600, 700]);
    assert_eq!(ms(&p.max_delay(MS(250)).attempts(5)), [100, 200, 250, 250]);
}

#[test]
fn fibonacci_100ms_follows_the_sequence_and_caps() {
    let p = Policy::fibonacci(MS(100)).jitter(Jitter::None).attempts(8);
    assert_eq!(ms(&p), [100, 100, 200, 300, 500, 800, 1300]);
    assert_eq!(
        ms(&p.max_delay(MS(400))),
        [100, 100, 200, 300, 400, 400, 400]
    );
}

#[test]
fn constant_waits_the_same_delay_capped_by_max() {
    let p = Policy::constant(Duration::from_secs(1))
        .jitter(Jitter::None)
        .attempts(4);
    assert_eq!(ms(&p), [1000, 1000, 1000]);
    assert_eq!(ms(&p.max_delay(MS(10))), [10, 10, 10]);
}

#[test]
fn immediate_never_sleeps_whatever_the_jitter() {
    for j in [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Scattered(1.0),
    ] {
        let p = Policy::immediate().jitter(j).attempts(5);
        assert_eq!(ms(&p), [0, 0, 0, 0], "{j:?}");
    }
}

#[test]
fn default_policy_is_the_attribute_default() {
    let expected = Policy::exponential(MS(100))
        .factor(2.0)
        .max_delay(Duration::from_secs(10))
        .jitter(Jitter::Full)
        .attempts(3);
    let p = Policy::default();
    assert_eq!(p, expected);
    assert_eq!(p.attempt_limit(), Some(3));
    assert_eq!(p.elapsed_limit(), None);
    assert_eq!(p.jitter_kind(), Jitter::Full);
    assert_eq!(p.strategy().max_delay(), Duration::from_secs(10));
}

#[test]
fn constructors_default_to_full_jitter_except_decorrelated_and_immediate() {
    let base = MS(100);
    for p in [
        Policy::exponential(base),
        Policy::linear(base),
        Policy::constant(base),
        Policy::fibonacci(base),
    ] {
        assert_eq!(p.jitter_kind(), Jitter::Full, "{p:?}");
        assert_eq!(p.attempt_limit(), Some(3), "{p:?}");
    }
    assert_eq!(Policy::decorrelated(base).jitter_kind(), Jitter::None);
    assert_eq!(Policy::immediate().jitter_kind(), Jitter::None);
}

#[test]
fn attempts_zero_means_a_single_attempt() {
    let p = Policy::immediate().attempts(0);
    assert_eq!(p.attempt_limit(), Some(1));
    assert_eq!(p.delays().count(), 0);
    assert_eq!(p.start().next_delay(), None);
}

#[test]
fn linear_schedule_stops_before_crossing_max_elapsed() {
    let p = Policy::linear(Duration::from_secs(1))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(Duration::from_secs(10));
    let secs: Vec<u64> = p.delays().map(|d| d.as_secs()).collect();
    assert_eq!(secs, [1, 2, 3, 4]);
}

#[test]
fn different_seeds_give_different_jittered_schedules() {
    let p = Policy::exponential(MS(100))
        .jitter(Jitter::Full)
        .attempts(20);
    assert_eq!(ms(&p.seed(5)), ms(&p.seed(5)));
    assert_ne!(ms(&p.seed(5)), ms(&p.seed(6)));
}

#[test]
fn retry_after_waits_exactly_uncapped_and_does_not_advance_the_schedule() {
    let p = Policy::exponential(MS(100))
        .max_delay(MS(300))
        .jitter(Jitter::None)
        .attempts(10);
    let mut s = p.start();
    assert_eq!(s.next_delay(), Some(MS(100)));
    let server = Duration::from_secs(60);
    assert_eq!(s.next_delay_for(Decision::RetryAfter(server)), Some(server));
    assert_eq!(s.next_delay(), Some(MS(200)));
    assert_eq!(s.next_delay_for(Decision::Stop), None);
    assert_eq!(s.next_delay(), None);
}

#[test]
fn retry_after_crossing_the_deadline_gives_up_at_once() {
    reset_clock();
    let p = Policy::constant(MS(100))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(Duration::from_secs(5));
    let mut s = p.start_with_clock(virtual_clock);
    advance(Duration::from_secs(1));
    assert_eq!(
        s.next_delay_for(Decision::RetryAfter(Duration::from_secs(4))),
        Some(Duration::from_secs(4)),
        "1 s + 4 s ends exactly at the deadline"
    );
    advance(Duration::from_secs(4));
    assert_eq!(
        s.next_delay_for(Decision::RetryAfter(Duration::from_nanos(1))),
        None
    );
    assert!(s.is_done());
    assert_eq!(s.next_delay(), None);
}

#[test]
fn huge_durations_and_u32_max_attempts_saturate_at_max() {
    let p = Policy::exponential(Duration::MAX)
        .max_delay(Duration::MAX)
        .factor(f64::MAX)
        .jitter(Jitter::None)
        .attempts(u32::MAX);
    assert!(p.delays().take(50).all(|d| d == Duration::MAX));
    let mut rng = JitterRng::from_seed(1);
    for s in [
        Policy::exponential(Duration::MAX).max_delay(Duration::MAX),
        Policy::linear(Duration::MAX).max_delay(Duration::MAX),
        Policy::fibonacci(Duration::from_nanos(1)).max_delay(Duration::MAX),
        Policy::decorrelated(Duration::MAX).max_delay(Duration::MAX),
        Policy::constant(Duration::MAX),
    ] {
        let d = s.strategy().delay(u32::MAX, Some(Duration::MAX), &mut rng);
        assert_eq!(d, Duration::MAX, "{s:?}");
    }
}
