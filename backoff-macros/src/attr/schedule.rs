//! The schedule's delays before jitter, computed when the code compiles
//! by the schedule language's evaluator (`backoff-schedule`, which
//! `Policy::parse` checks `stop_at_delay` with), as the runtime computes
//! them: for `stop_at_delay`, which turns into an attempt count for a
//! schedule without randomness.

use std::time::Duration;

use backoff_schedule::macro_support as eval;
pub(crate) use backoff_schedule::macro_support::StopAt;

use super::Attempts;
use super::strategy::StrategyArg;

/// The retry whose delay first reaches `stop`, for the schedule `s`
/// (`None`: the default exponential).
pub(crate) fn stop_at(s: Option<&StrategyArg>, stop: Duration) -> StopAt {
    eval::stop_at(s.map(|s| &*s.schedule), stop)
}

/// An `on(..)` arm's attempt limit beside the top-level `stop_at_delay`:
/// the rule's count where it reaches the arm's schedule (the smaller of it
/// and the arm's own `attempts`), else the arm's own `attempts`.
pub(crate) fn arm_limit(
    strategy: &StrategyArg,
    given: Option<Attempts>,
    stop: Option<Duration>,
) -> Option<Attempts> {
    match eval::stop_rule(Some(&strategy.schedule), given, stop) {
        (limit, None) => limit,
        // (Random, or never reached: the arm's own.)
        (_, Some(_)) => given,
    }
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

    use super::{StopAt, stop_at};
    use crate::attr::{RetryArgs, StrategyKind};
    use crate::errors::Errors;
    use backoff_schedule::macro_support::max;

    /// The runtime's strategy for a parsed one, built as the expansion
    /// builds it (stages nest to the right).
    fn runtime(s: &backoff_schedule::Strategy) -> &'static dyn Strategy {
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
                            u32::try_from(stage.times.as_ref().map_or(0, |t| t.value)).unwrap(),
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
            prop_assert_eq!(max(&s.schedule), r.max_delay(), "{}", text);
            for k in 1..40u32 {
                let expected = r.central_delay(k);
                let got = backoff_schedule::macro_support::central(&s.schedule, u64::from(k)).expect("no random stage");
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
