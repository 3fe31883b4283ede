//! The names table, the schedule language's (`backoff-schedule`): the
//! strategies, the other arguments, the jitters, and Effect's names for
//! the combinators; and the attribute's `jitter` value, whose own
//! `static` keeps its tokens.

pub(crate) use backoff_schedule::StrategyKind;
pub(crate) use backoff_schedule::macro_support::{
    JITTERS_OR_STATIC, OTHER_ARGUMENTS, arguments, combinator_home,
};

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
