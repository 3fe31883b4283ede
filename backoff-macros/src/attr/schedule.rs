//! The schedule's delays before jitter, computed when the code compiles,
//! as the runtime computes them: for `stop_at_delay`, which turns into an
//! attempt count for a schedule without randomness.

use std::time::Duration;

use super::Attempts;
use super::defaults;
use super::names::StrategyKind;
use super::strategy::StrategyArg;

/// How far the evaluator looks for the delay that reaches the stop.
pub(crate) const HORIZON: u64 = 100_000;

/// What `stop_at_delay` makes of a schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum StopAt {
    /// Retry `attempts` (its delay reaches the stop) never starts: the
    /// call makes at most `attempts` calls.
    Attempts(u64),
    /// No delay reaches the stop: the schedule's cap `max` is below it, or
    /// no delay within [`HORIZON`] retries reaches it.
    Never { max: Duration },
    /// The schedule draws its delays at random: a run-time check.
    Random,
}

/// The retry whose delay first reaches `stop`, for the schedule `s`
/// (`None`: the default exponential).
pub(crate) fn stop_at(s: Option<&StrategyArg>, stop: Duration) -> StopAt {
    let default = StrategyArg::default_exponential();
    let s = s.unwrap_or(&default);
    // No delay exceeds the cap: below the stop, nothing can reach it.
    let cap = max(s);
    if cap < stop {
        return StopAt::Never { max: cap };
    }
    for k in 1..=HORIZON {
        match central(s, k) {
            None => return StopAt::Random,
            Some(d) if d >= stop => return StopAt::Attempts(k),
            Some(_) => {}
        }
    }
    StopAt::Never { max: cap }
}

/// An `on(..)` arm's attempt limit beside the top-level `stop_at_delay`:
/// the rule's count where it reaches the arm's schedule (the smaller of it
/// and the arm's own `attempts`), else the arm's own `attempts`.
pub(crate) fn arm_limit(
    strategy: &StrategyArg,
    given: Option<Attempts>,
    stop: Option<Duration>,
) -> Option<Attempts> {
    match stop.map(|d| stop_at(Some(strategy), d)) {
        Some(StopAt::Attempts(k)) => Some(Attempts::Limited(match given {
            Some(Attempts::Limited(n)) => n.min(k),
            _ => k,
        })),
        _ => given,
    }
}

/// The delay of retry `k` (from 1) before jitter, `None` if random.
pub(crate) fn central(s: &StrategyArg, k: u64) -> Option<Duration> {
    // (A stage that ends by time, or a side that ends: known at run time.)
    if super::compose::first_end(s).is_some() {
        return None;
    }
    let base = s.base.as_ref().map_or(defaults::base(s.kind), |b| b.value);
    let cap = max(s);
    let nanos = |d: Duration| d.as_nanos();
    let capped = |n: u128| {
        Duration::from_nanos(u64::try_from(n.min(nanos(cap))).unwrap_or(u64::MAX)).min(cap)
    };
    Some(match s.kind {
        StrategyKind::Immediate => Duration::ZERO,
        StrategyKind::Decorrelated | StrategyKind::Sidekiq | StrategyKind::Buckets => return None,
        StrategyKind::Constant => base.min(cap),
        StrategyKind::Linear => capped(nanos(base).saturating_mul(u128::from(k))),
        StrategyKind::Fibonacci => capped(nanos(base).saturating_mul(fib(k))),
        StrategyKind::Exponential => {
            let factor = s.factor.as_ref().map_or(2.0, |f| f.value);
            let exponent = i32::try_from(k - 1).unwrap_or(i32::MAX);
            let n = nanos(base) as f64 * factor.powi(exponent);
            if n.is_finite() && n < nanos(cap) as f64 {
                Duration::from_nanos(n.round() as u64)
            } else {
                cap
            }
        }
        StrategyKind::Steps => {
            let i = usize::try_from(k - 1).unwrap_or(usize::MAX);
            s.steps
                .get(i)
                .or(s.steps.last())
                .map_or(Duration::ZERO, |d| d.value)
        }
        StrategyKind::Chain => {
            let mut own = k;
            let mut stages = s.stages.iter().peekable();
            while let Some(stage) = stages.next() {
                match stage.times {
                    Some(t) if stages.peek().is_some() && own > t.value => own -= t.value,
                    _ => return central(stage, own),
                }
            }
            Duration::ZERO
        }
        StrategyKind::Shorter | StrategyKind::Longer | StrategyKind::Sum => {
            let mut delays = s.stages.iter().map(|stage| central(stage, k));
            let first = delays.next()??;
            let mut acc = first;
            for d in delays {
                let d = d?;
                acc = match s.kind {
                    StrategyKind::Shorter => acc.min(d),
                    StrategyKind::Longer => acc.max(d),
                    _ => acc.saturating_add(d),
                };
            }
            acc
        }
        // (A strategy the crate adds: its delays are not known here.)
        _ => return None,
    })
}

/// The schedule's cap: a stage's `max` (default `"10s"` for the growing
/// strategies), `constant`'s delay inside a composition (unbounded at the
/// top level), the largest step, and the composed forms' rule.
pub(crate) fn max(s: &StrategyArg) -> Duration {
    let given = s.max.as_ref().map(|m| m.value);
    match s.kind {
        StrategyKind::Immediate => Duration::ZERO,
        StrategyKind::Constant if s.nested => s.base.as_ref().map_or(defaults::DELAY, |b| b.value),
        StrategyKind::Constant | StrategyKind::Sidekiq | StrategyKind::Buckets => {
            given.unwrap_or(Duration::MAX)
        }
        StrategyKind::Exponential
        | StrategyKind::Linear
        | StrategyKind::Fibonacci
        | StrategyKind::Decorrelated => given.unwrap_or(defaults::MAX),
        StrategyKind::Steps => s.steps.iter().map(|d| d.value).max().unwrap_or_default(),
        StrategyKind::Chain | StrategyKind::Longer => {
            s.stages.iter().map(max).max().unwrap_or_default()
        }
        // (A side that ends leaves the other's delays.)
        StrategyKind::Shorter
            if s.stages
                .iter()
                .any(|side| side.times.is_some() || side.lasting.is_some()) =>
        {
            s.stages.iter().map(max).max().unwrap_or_default()
        }
        StrategyKind::Shorter => s.stages.iter().map(max).min().unwrap_or_default(),
        StrategyKind::Sum => s
            .stages
            .iter()
            .map(max)
            .fold(Duration::ZERO, Duration::saturating_add),
        _ => Duration::MAX,
    }
}

/// fib(k) with fib(1) = fib(2) = 1, saturating.
fn fib(k: u64) -> u128 {
    let (mut a, mut b) = (1u128, 1u128);
    for _ in 1..k.min(200) {
        (a, b) = (b, a.saturating_add(b));
    }
    a
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use backoff_runtime::strategy::{
        Chain, Constant, Exponential, Fibonacci, Immediate, Linear, Longer, Shorter, Steps, Sum,
    };
    use backoff_runtime::{JitterRng, Strategy};
    use proptest::prelude::*;
    use proptest::strategy::Strategy as _;

    use super::{StopAt, central, max, stop_at};
    use crate::attr::{RetryArgs, StrategyArg, StrategyKind};
    use crate::errors::Errors;

    /// The runtime's strategy for a parsed one, built as the expansion
    /// builds it (stages nest to the right).
    fn runtime(s: &StrategyArg) -> &'static dyn Strategy {
        let base = s.base.as_ref().map(|b| b.value);
        let given = s.max.as_ref().map(|m| m.value);
        let leak = |b: Box<dyn Strategy>| -> &'static dyn Strategy { Box::leak(b) };
        match s.kind {
            StrategyKind::Exponential => {
                let mut e = Exponential::new(base.unwrap_or(Duration::from_millis(100)));
                if let Some(f) = &s.factor {
                    e = e.factor(f.value);
                }
                if let Some(m) = given {
                    e = e.max_delay(m);
                }
                leak(Box::new(e))
            }
            StrategyKind::Linear => {
                let l = Linear::new(base.unwrap_or(Duration::from_millis(100)));
                leak(Box::new(given.map_or(l, |m| l.max_delay(m))))
            }
            StrategyKind::Fibonacci => {
                let f = Fibonacci::new(base.unwrap_or(Duration::from_millis(100)));
                leak(Box::new(given.map_or(f, |m| f.max_delay(m))))
            }
            StrategyKind::Constant => {
                let d = base.unwrap_or(Duration::from_secs(1));
                let c = Constant::new(d);
                leak(Box::new(if s.nested { c.max_delay(d) } else { c }))
            }
            StrategyKind::Immediate => leak(Box::new(Immediate)),
            StrategyKind::Steps => {
                let delays: Vec<Duration> = s.steps.iter().map(|d| d.value).collect();
                leak(Box::new(Steps::new(Vec::leak(delays))))
            }
            kind => {
                let mut stages = s.stages.iter().rev();
                let mut acc = runtime(stages.next().expect("two stages"));
                for stage in stages {
                    let a = runtime(stage);
                    acc = match kind {
                        StrategyKind::Chain => leak(Box::new(Chain::new(
                            a,
                            u32::try_from(stage.times.map_or(0, |t| t.value)).unwrap(),
                            acc,
                        ))),
                        StrategyKind::Shorter => leak(Box::new(Shorter::new(a, acc))),
                        StrategyKind::Longer => leak(Box::new(Longer::new(a, acc))),
                        _ => leak(Box::new(Sum::new(a, acc))),
                    };
                }
                acc
            }
        }
    }

    fn leaf() -> impl proptest::strategy::Strategy<Value = String> {
        let ms = 1u64..5_000;
        prop_oneof![
            (ms.clone(), ms.clone())
                .prop_map(|(b, m)| format!("exponential(base = \"{b}ms\", max = \"{}ms\")", b + m)),
            ms.clone()
                .prop_map(|b| format!("exponential(base = \"{b}ms\", factor = 1.5)")),
            ms.clone().prop_map(|b| format!("linear(base = \"{b}ms\")")),
            (ms.clone(), ms.clone())
                .prop_map(|(b, m)| format!("fibonacci(base = \"{b}ms\", max = \"{}ms\")", b + m)),
            ms.clone().prop_map(|d| format!("constant(\"{d}ms\")")),
            Just("immediate".to_owned()),
            proptest::collection::vec(ms, 1..4).prop_map(|v| {
                let v: Vec<String> = v.iter().map(|d| format!("\"{d}ms\"")).collect();
                format!("steps({})", v.join(", "))
            }),
        ]
    }

    fn schedule() -> impl proptest::strategy::Strategy<Value = String> {
        leaf().prop_recursive(3, 12, 3, |inner| {
            (
                prop_oneof![Just("chain"), Just("shorter"), Just("longer"), Just("sum")],
                proptest::collection::vec((inner, 1u64..5), 2..4),
            )
                .prop_map(|(form, stages)| {
                    let last = stages.len() - 1;
                    let stages: Vec<String> = stages
                        .into_iter()
                        .enumerate()
                        .map(|(i, (stage, times))| {
                            if form != "chain" || i == last {
                                return stage;
                            }
                            // `times` goes inside the stage's parentheses.
                            match stage.strip_suffix(')') {
                                Some(open) => format!("{open}, times = {times})"),
                                None => format!("{stage}(times = {times})"),
                            }
                        })
                        .collect();
                    format!("{form}({})", stages.join(", "))
                })
        })
    }

    proptest! {
        /// The evaluator's delays are the runtime's, retry by retry, and
        /// so is its cap: the attempt count `stop_at_delay` compiles to is
        /// the one the runtime's rule would reach.
        #[test]
        fn the_evaluator_is_the_runtime(text in schedule(), stop_ms in 1u64..20_000) {
            let mut errors = Errors::default();
            let args = RetryArgs::parse(text.parse().unwrap(), &mut errors);
            prop_assert!(errors.finish().is_ok(), "{text}");
            let s = args.strategy.expect("a strategy");
            let r = runtime(&s);
            let mut rng = JitterRng::from_seed(0);
            prop_assert_eq!(max(&s), r.max_delay(), "{}", text);
            for k in 1..40u32 {
                let expected = r.central_delay(k);
                let got = central(&s, u64::from(k)).expect("no random stage");
                // (Exponential with factor 1.5 rounds in floating point.)
                let diff = got.abs_diff(expected);
                prop_assert!(diff <= Duration::from_nanos(2), "{text} retry {k}: {got:?} vs {expected:?}");
                prop_assert_eq!(r.delay(k, None, &mut rng), expected);
            }
            let stop = Duration::from_millis(stop_ms);
            if let StopAt::Attempts(n) = stop_at(Some(&s), stop) {
                let n = u32::try_from(n).unwrap();
                prop_assert!(r.central_delay(n) >= stop, "{text}: {n}");
                prop_assert!((1..n).all(|k| r.central_delay(k) < stop), "{text}: {n}");
            }
        }
    }
}
