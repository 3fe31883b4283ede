//! The defaults, each written once: the growing strategies' base and max,
//! `constant`'s delay, and the jitter a strategy has when none is given.
//! Messages that name a default print these values.

use std::time::Duration;

use super::names::{JitterKind, StrategyKind};
use crate::duration;

/// The base of the growing strategies when none is given (the runtime's).
pub(crate) const BASE: Duration = Duration::from_millis(100);

/// Their `max` when none is given (the runtime's).
pub(crate) const MAX: Duration = Duration::from_secs(10);

/// The attempt limit when `attempts` is not given (the runtime's
/// `DEFAULT_ATTEMPTS`).
pub(crate) const ATTEMPTS: u64 = 3;

/// `sidekiq`'s and `buckets`' unit when none is given: their formulas
/// count in seconds.
pub(crate) const UNIT: Duration = Duration::from_secs(1);

/// `constant`'s delay when none is given.
pub(crate) const DELAY: Duration = Duration::from_secs(1);

/// The first delay of `kind` when none is given: `constant`'s delay, or the
/// others' base.
pub(crate) const fn base(kind: StrategyKind) -> Duration {
    match kind {
        StrategyKind::Constant => DELAY,
        StrategyKind::Sidekiq | StrategyKind::Buckets => UNIT,
        _ => BASE,
    }
}

/// The jitter a strategy has when `jitter` is not given: the runtime's
/// table (`Builtin::default_jitter`, which a `Fixed` policy without a
/// jitter reads) for its strategies, and none for `sidekiq` and `buckets`
/// (random by themselves) and `steps` (read as written). A composed
/// schedule's is `StrategyArg::default_jitter`'s.
pub(crate) const fn jitter(kind: StrategyKind) -> JitterKind {
    match kind {
        StrategyKind::Decorrelated
        | StrategyKind::Immediate
        | StrategyKind::Sidekiq
        | StrategyKind::Buckets
        | StrategyKind::Steps => JitterKind::None,
        _ => JitterKind::Full,
    }
}

/// `preset = ".."`: each name, and its exponential's base and max in
/// milliseconds and its attempts, full jitter (the runtime's `presets`,
/// whose constants these are in lower case; `tests/presets.rs` checks the
/// two agree).
pub(crate) const PRESETS: [Preset; 6] = [
    ("internal_api", 10, 1_000, 6),
    ("external_api", 100, 10_000, 6),
    ("rate_limited", 500, 60_000, 11),
    ("database", 50, 5_000, 4),
    ("third_party", 1_000, 30_000, 6),
    ("aws_standard", 1_000, 20_000, 3),
];

/// A preset: its name, base and max in milliseconds, and attempts.
pub(crate) type Preset = (&'static str, u64, u64, u64);

/// A duration as the attribute's literal: `"100ms"`.
pub(crate) fn literal(d: Duration) -> String {
    format!("\"{}\"", duration::format(d))
}
