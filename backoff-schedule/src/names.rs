//! The names table: the strategies, the other arguments, the jitters, and
//! where a name from another library or the wrong level belongs.

/// A strategy's name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum StrategyKind {
    /// `exponential(base, factor, max)`: base · factor^(k−1).
    Exponential,
    /// `linear(base, max)`: base · k.
    Linear,
    /// `constant(delay)`: the same delay.
    Constant,
    /// `fibonacci(base, max)`: base · fib(k).
    Fibonacci,
    /// `decorrelated(base, max)`: AWS's decorrelated jitter.
    Decorrelated,
    /// `immediate`: no wait.
    Immediate,
    /// `sidekiq(unit, max)`: Sidekiq's formula.
    Sidekiq,
    /// `buckets(unit, max)`: growing random buckets.
    Buckets,
    /// `chain(A(.., times = n), B)`: stages one after the other.
    Chain,
    /// `steps("1s", "5s")`: a list of delays, the last repeating.
    Steps,
    /// `shorter(A, B)`: the smaller delay of each retry.
    Shorter,
    /// `longer(A, B)`: the larger delay of each retry.
    Longer,
    /// `sum(A, B)`: the delays of each retry added.
    Sum,
}

impl StrategyKind {
    const ALL: [StrategyKind; 13] = [
        StrategyKind::Exponential,
        StrategyKind::Linear,
        StrategyKind::Constant,
        StrategyKind::Fibonacci,
        StrategyKind::Decorrelated,
        StrategyKind::Immediate,
        StrategyKind::Sidekiq,
        StrategyKind::Buckets,
        StrategyKind::Chain,
        StrategyKind::Steps,
        StrategyKind::Shorter,
        StrategyKind::Longer,
        StrategyKind::Sum,
    ];

    /// The names, in the order of [`StrategyKind::ALL`].
    #[doc(hidden)]
    pub const NAMES: [&'static str; 13] = {
        let mut names = [""; 13];
        let mut i = 0;
        while i < 13 {
            names[i] = StrategyKind::ALL[i].name();
            i += 1;
        }
        names
    };

    /// The strategy's name in the attribute.
    pub const fn name(self) -> &'static str {
        match self {
            StrategyKind::Exponential => "exponential",
            StrategyKind::Linear => "linear",
            StrategyKind::Constant => "constant",
            StrategyKind::Fibonacci => "fibonacci",
            StrategyKind::Decorrelated => "decorrelated",
            StrategyKind::Immediate => "immediate",
            StrategyKind::Sidekiq => "sidekiq",
            StrategyKind::Buckets => "buckets",
            StrategyKind::Chain => "chain",
            StrategyKind::Steps => "steps",
            StrategyKind::Shorter => "shorter",
            StrategyKind::Longer => "longer",
            StrategyKind::Sum => "sum",
        }
    }

    /// Whether this form takes stages (other strategies) in its
    /// parentheses.
    pub const fn takes_stages(self) -> bool {
        matches!(
            self,
            StrategyKind::Chain | StrategyKind::Shorter | StrategyKind::Longer | StrategyKind::Sum
        )
    }

    /// Whether this form combines its stages' delays retry by retry, so
    /// that no stage sees its own previous delay.
    pub const fn combines(self) -> bool {
        matches!(
            self,
            StrategyKind::Shorter | StrategyKind::Longer | StrategyKind::Sum
        )
    }

    /// The strategy of this name.
    #[doc(hidden)]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The parameters this strategy accepts.
    pub(crate) fn params(self) -> &'static [&'static str] {
        match self {
            StrategyKind::Exponential => &["base", "factor", "max"],
            StrategyKind::Linear | StrategyKind::Fibonacci | StrategyKind::Decorrelated => {
                &["base", "max"]
            }
            StrategyKind::Constant => &["delay"],
            StrategyKind::Immediate
            | StrategyKind::Chain
            | StrategyKind::Steps
            | StrategyKind::Shorter
            | StrategyKind::Longer
            | StrategyKind::Sum => &[],
            StrategyKind::Sidekiq | StrategyKind::Buckets => &["unit", "max"],
        }
    }
}

/// Every argument name, for "did you mean" and the unknown-argument list:
/// the strategies' ([`StrategyKind::NAMES`]), then these.
pub const OTHER_ARGUMENTS: [&str; 30] = [
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
    "stop_at_delay",
    "on_deadline",
    "context",
    "clone",
    "on",
    "preset",
    "chaos",
    "reset_after",
    "on_success",
    "cancel",
];

/// The arguments of [`OTHER_ARGUMENTS`] a schedule text takes; the
/// others are the attribute's alone.
pub const SCHEDULE_ARGUMENTS: [&str; 6] = [
    "attempts",
    "jitter",
    "max_elapsed",
    "stop_at_delay",
    "on_deadline",
    "retry_after_max",
];

/// A preset: its name, its exponential's base and max in milliseconds,
/// and its attempts (full jitter).
pub type Preset = (&'static str, u64, u64, u64);

/// The attribute's `preset = ".."`: the runtime's `presets`, whose
/// constants these are in lower case (`tests/presets.rs` checks the two
/// agree).
pub const PRESETS: [Preset; 6] = [
    ("internal_api", 10, 1_000, 6),
    ("external_api", 100, 10_000, 6),
    ("rate_limited", 500, 60_000, 11),
    ("database", 50, 5_000, 4),
    ("third_party", 1_000, 30_000, 6),
    ("aws_standard", 1_000, 20_000, 3),
];

/// [`StrategyKind::NAMES`] and [`OTHER_ARGUMENTS`].
pub fn arguments() -> Vec<&'static str> {
    StrategyKind::NAMES
        .into_iter()
        .chain(OTHER_ARGUMENTS)
        .collect()
}

/// The `jitter` value.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum JitterKind {
    /// No jitter: `"none"`.
    None,
    /// `"full"`: uniform between zero and the delay.
    Full,
    /// `"equal"` (`"half"`): half the delay plus a uniform share of the other half.
    Equal,
    /// `scattered(r)`: uniform within ±r of the delay.
    Scattered(f64),
    /// `range(lo, hi)`: uniform between `v·lo` and `v·hi`.
    Range(f64, f64),
    /// `"spread"`: one random phase per call, read along the schedule.
    Spread,
    /// `jitter = NAME`: a `static` implementing the runtime's `Jitterer`,
    /// its path as written (the attribute's alone: a text cannot name one).
    Custom(String),
}

pub(crate) const JITTER_NAMES: [&str; 5] = ["full", "equal", "half", "none", "spread"];

pub(crate) const JITTERS: &str = "`\"full\"`, `\"equal\"`, `\"half\"`, `\"none\"`, `\"spread\"`, `scattered(R)`, `range(LO, HI)`";

/// `JITTERS` and your own, for a value not in quotes.
pub const JITTERS_OR_STATIC: &str = "`\"full\"`, `\"equal\"`, `\"half\"`, `\"none\"`, `\"spread\"`, `scattered(R)`, `range(LO, HI)`, or the name of a `static` implementing `Jitterer`";

/// Effect's names for the combinators, and the form that does the same:
/// `union` recurs while either does (the shorter delay), `intersect` while
/// both do (the longer), `and_then` runs one after the other.
pub fn combinator_home(name: &str) -> Option<&'static str> {
    Some(match name {
        "union" | "either" => "shorter",
        "intersect" | "both" => "longer",
        "and_then" | "andThen" | "then" => "chain",
        _ => return None,
    })
}

/// For a strategy parameter's name or another library's name for it: the
/// parameter, and what it is.
pub(crate) fn param_home(name: &str) -> Option<(&'static str, &'static str)> {
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
pub(crate) fn equivalent(param: &'static str, kind: StrategyKind) -> &'static str {
    match (param, kind) {
        ("delay", k) if k != StrategyKind::Constant => "base",
        ("base", StrategyKind::Constant) => "delay",
        (param, _) => param,
    }
}

/// For an argument of the attribute written inside a strategy, or another
/// library's name for one: the argument.
pub(crate) fn top_level_home(name: &str) -> Option<&'static str> {
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
