//! The names table: the strategies, the other arguments, the jitters, and
//! where a name from another library or the wrong level belongs. A leaf:
//! it imports nothing of the attribute's.

/// The strategy's name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum StrategyKind {
    Exponential,
    Linear,
    Constant,
    Fibonacci,
    Decorrelated,
    Immediate,
    Sidekiq,
    Buckets,
}

impl StrategyKind {
    const ALL: [StrategyKind; 8] = [
        StrategyKind::Exponential,
        StrategyKind::Linear,
        StrategyKind::Constant,
        StrategyKind::Fibonacci,
        StrategyKind::Decorrelated,
        StrategyKind::Immediate,
        StrategyKind::Sidekiq,
        StrategyKind::Buckets,
    ];

    /// The names, in the order of [`StrategyKind::ALL`].
    pub(super) const NAMES: [&'static str; 8] = {
        let mut names = [""; 8];
        let mut i = 0;
        while i < 8 {
            names[i] = StrategyKind::ALL[i].name();
            i += 1;
        }
        names
    };

    /// The strategy's name in the attribute.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            StrategyKind::Exponential => "exponential",
            StrategyKind::Linear => "linear",
            StrategyKind::Constant => "constant",
            StrategyKind::Fibonacci => "fibonacci",
            StrategyKind::Decorrelated => "decorrelated",
            StrategyKind::Immediate => "immediate",
            StrategyKind::Sidekiq => "sidekiq",
            StrategyKind::Buckets => "buckets",
        }
    }

    pub(super) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The parameters this strategy accepts.
    pub(super) fn params(self) -> &'static [&'static str] {
        match self {
            StrategyKind::Exponential => &["base", "factor", "max"],
            StrategyKind::Linear | StrategyKind::Fibonacci | StrategyKind::Decorrelated => {
                &["base", "max"]
            }
            StrategyKind::Constant => &["delay"],
            StrategyKind::Immediate => &[],
            StrategyKind::Sidekiq | StrategyKind::Buckets => &["unit", "max"],
        }
    }
}

/// Every argument name, for "did you mean" and the unknown-argument list:
/// the strategies' ([`StrategyKind::NAMES`]), then these.
pub(super) const OTHER_ARGUMENTS: [&str; 23] = [
    "attempts",
    "jitter",
    "max_elapsed",
    "when",
    "when_ok",
    "on_retry",
    "on_hedge",
    "on_giveup",
    "fallback",
    "sleep",
    "policy",
    "crate",
    "throttled",
    "budget",
    "circuit",
    "throttle",
    "hedge",
    "attempt_timeout",
    "timeout",
    "retry_after_max",
    "context",
    "clone",
    "on",
];

/// [`StrategyKind::NAMES`] and [`OTHER_ARGUMENTS`].
pub(crate) fn arguments() -> Vec<&'static str> {
    StrategyKind::NAMES
        .into_iter()
        .chain(OTHER_ARGUMENTS)
        .collect()
}

/// The `jitter` value.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum JitterKind {
    None,
    Full,
    Equal,
    Scattered(f64),
    Spread,
}

pub(super) const JITTER_NAMES: [&str; 5] = ["full", "equal", "half", "none", "spread"];

pub(super) const JITTERS: &str =
    "`\"full\"`, `\"equal\"`, `\"half\"`, `\"none\"`, `\"spread\"`, `scattered(R)`";

/// For a strategy parameter's name or another library's name for it: the
/// parameter, and what it is.
pub(super) fn param_home(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "base" | "initial_delay" | "initial_interval" | "initial" | "min_delay" | "min"
        | "first_delay" | "start" => ("base", "the first delay"),
        "max" | "max_delay" | "max_interval" | "max_backoff" | "cap" | "maximum" => {
            ("max", "the longest delay")
        }
        "factor" | "multiplier" | "exp_base" | "growth" => ("factor", "the growth factor"),
        "delay" | "interval" | "fixed_delay" | "wait" => ("delay", "the fixed delay"),
        _ => return None,
    })
}

/// The parameter of `kind` that plays `param`'s part: `constant`'s `delay`
/// is the others' `base`.
pub(super) fn equivalent(param: &'static str, kind: StrategyKind) -> &'static str {
    match (param, kind) {
        ("delay", k) if k != StrategyKind::Constant => "base",
        ("base", StrategyKind::Constant) => "delay",
        (param, _) => param,
    }
}

/// For an argument of the attribute written inside a strategy, or another
/// library's name for one: the argument.
pub(super) fn top_level_home(name: &str) -> Option<&'static str> {
    if let Some(known) = OTHER_ARGUMENTS.iter().find(|a| **a == name) {
        return Some(known);
    }
    Some(match name {
        "max_attempts" | "tries" | "max_tries" | "max_times" | "retries" | "max_retries" => {
            "attempts"
        }
        "max_elapsed_time" | "max_duration" => "max_elapsed",
        _ => return None,
    })
}
