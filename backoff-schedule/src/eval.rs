//! The schedule's delays before jitter, computed without the runtime, as
//! the runtime computes them: for `stop_at_delay`, which turns into an
//! attempt count for a schedule without randomness.

use core::time::Duration;

use crate::check as defaults;
use crate::{Attempts, Spanned, Strategy as StrategyArg, StrategyKind};

/// How far the evaluator looks for the delay that reaches the stop.
pub(crate) const HORIZON: u64 = 100_000;

/// What `stop_at_delay` makes of a schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopAt {
    /// Retry `attempts` (its delay reaches the stop) never starts: the
    /// call makes at most `attempts` calls.
    Attempts(u64),
    /// No delay reaches the stop: the schedule's cap `max` is below it, or
    /// no delay within `HORIZON` retries reaches it.
    Never {
        /// The cap.
        max: Duration,
    },
    /// The schedule draws its delays at random: a run-time check.
    Random,
}

/// The retry whose delay first reaches `stop`, for the schedule `s`
/// (`None`: the default exponential).
pub fn stop_at(s: Option<&StrategyArg>, stop: Duration) -> StopAt {
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

/// The attempt limit and the delay of a run-time `stop_at_delay` (`stop`)
/// for the schedule `s` (`None`: the default exponential) and the
/// `attempts` given: see [`Schedule::stop_rule`](crate::Schedule::stop_rule).
pub fn stop_rule(
    s: Option<&StrategyArg>,
    attempts: Option<Attempts>,
    stop: Option<Duration>,
) -> (Option<Attempts>, Option<Duration>) {
    let Some(d) = stop else {
        return (attempts, None);
    };
    match stop_at(s, d) {
        StopAt::Attempts(k) => {
            let k = match attempts {
                Some(Attempts::Limited(n)) => n.min(k),
                _ => k,
            };
            (Some(Attempts::Limited(k)), None)
        }
        StopAt::Random | StopAt::Never { .. } => {
            (Some(attempts.unwrap_or(Attempts::Unlimited)), Some(d))
        }
    }
}

/// The delay of retry `k` (from 1) before jitter, `None` if random.
pub fn central(s: &StrategyArg, k: u64) -> Option<Duration> {
    // (A stage that ends by time, or a side that ends: known at run time.)
    if crate::check::first_end(s).is_some() {
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
                match &stage.times {
                    Some(Spanned { value: t, .. }) if stages.peek().is_some() && own > *t => {
                        own -= *t
                    }
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
    })
}

/// The schedule's cap: a stage's `max` (default `"10s"` for the growing
/// strategies), `constant`'s delay inside a composition (unbounded at the
/// top level), the largest step, and the composed forms' rule.
pub fn max(s: &StrategyArg) -> Duration {
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
