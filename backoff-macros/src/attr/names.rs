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
    pub(super) const NAMES: [&'static str; 13] = {
        let mut names = [""; 13];
        let mut i = 0;
        while i < 13 {
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
            StrategyKind::Chain => "chain",
            StrategyKind::Steps => "steps",
            StrategyKind::Shorter => "shorter",
            StrategyKind::Longer => "longer",
            StrategyKind::Sum => "sum",
        }
    }

    /// Whether this form takes stages (other strategies) in its
    /// parentheses.
    pub(crate) const fn takes_stages(self) -> bool {
        matches!(
            self,
            StrategyKind::Chain | StrategyKind::Shorter | StrategyKind::Longer | StrategyKind::Sum
        )
    }

    /// Whether this form combines its stages' delays retry by retry, so
    /// that no stage sees its own previous delay.
    pub(crate) const fn combines(self) -> bool {
        matches!(
            self,
            StrategyKind::Shorter | StrategyKind::Longer | StrategyKind::Sum
        )
    }

    pub(super) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

/// Every argument name, for "did you mean" and the unknown-argument list:
/// the strategies' ([`StrategyKind::NAMES`]), then these.
pub(super) const OTHER_ARGUMENTS: [&str; 30] = [
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

/// [`StrategyKind::NAMES`] and [`OTHER_ARGUMENTS`].
pub(crate) fn arguments() -> Vec<&'static str> {
    StrategyKind::NAMES
        .into_iter()
        .chain(OTHER_ARGUMENTS)
        .collect()
}

/// The `jitter` value.
#[derive(Clone, Debug)]
pub(crate) enum JitterKind {
    None,
    Full,
    Equal,
    Scattered(f64),
    /// `range(lo, hi)`: uniform between `v·lo` and `v·hi`.
    Range(f64, f64),
    Spread,
    /// `jitter = NAME`: a `static` implementing the runtime's `Jitterer`.
    Custom(Custom),
}

/// The path of a `jitter = NAME`, as written.
#[derive(Clone, Debug)]
pub(crate) struct Custom(pub(crate) proc_macro2::TokenStream);

/// [`JITTERS`] and your own, for a value not in quotes.
pub(super) const JITTERS_OR_STATIC: &str = "`\"full\"`, `\"equal\"`, `\"half\"`, `\"none\"`, `\"spread\"`, `scattered(R)`, `range(LO, HI)`, or the name of a `static` implementing `Jitterer`";

/// Effect's names for the combinators, and the form that does the same:
/// `union` recurs while either does (the shorter delay), `intersect` while
/// both do (the longer), `and_then` runs one after the other.
pub(super) fn combinator_home(name: &str) -> Option<&'static str> {
    Some(match name {
        "union" | "either" => "shorter",
        "intersect" | "both" => "longer",
        "and_then" | "andThen" | "then" => "chain",
        _ => return None,
    })
}
