//! The names table, the schedule language's (`backoff-schedule`): the
//! strategies, the other arguments, the jitters, and Effect's names for
//! the combinators; and the attribute's `jitter` value, whose own
//! `static` keeps its tokens.

pub(crate) use backoff_schedule::StrategyKind;
#[cfg(test)]
pub(crate) use backoff_schedule::macro_support::arguments;
pub(crate) use backoff_schedule::macro_support::{JITTERS_OR_STATIC, OTHER_ARGUMENTS};

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

impl JitterKind {
    /// As the crate writes it (a `static`'s path as text).
    pub(crate) fn to_schedule(&self) -> backoff_schedule::JitterKind {
        use backoff_schedule::JitterKind as J;
        match self {
            JitterKind::None => J::None,
            JitterKind::Full => J::Full,
            JitterKind::Equal => J::Equal,
            JitterKind::Spread => J::Spread,
            JitterKind::Scattered(r) => J::Scattered(*r),
            JitterKind::Range(lo, hi) => J::Range(*lo, *hi),
            JitterKind::Custom(c) => J::Custom(c.0.to_string()),
        }
    }

    /// The crate's jitter; `None` for a `static`'s, whose tokens it lacks.
    pub(crate) fn of(j: backoff_schedule::JitterKind) -> Option<JitterKind> {
        use backoff_schedule::JitterKind as J;
        Some(match j {
            J::None => JitterKind::None,
            J::Full => JitterKind::Full,
            J::Equal => JitterKind::Equal,
            J::Spread => JitterKind::Spread,
            J::Scattered(r) => JitterKind::Scattered(r),
            J::Range(lo, hi) => JitterKind::Range(lo, hi),
            _ => return None,
        })
    }
}
