//! The strategy argument (`exponential(base = "100ms", ..)` and its kin),
//! as parsed (`compose.rs`): its parameters, and a stage's `times`.

use proc_macro2::Span;

use super::literal::{DurationArg, FactorArg};
use super::names::{JitterKind, StrategyKind};

/// The strategy argument: `exponential(base = "100ms", factor = 2, max = "5s")`.
pub(crate) struct StrategyArg {
    pub(crate) kind: StrategyKind,
    pub(crate) span: Span,
    /// `base`, or the constant's `delay`.
    pub(crate) base: Option<DurationArg>,
    pub(crate) factor: Option<FactorArg>,
    pub(crate) max: Option<DurationArg>,
    /// Inside another form: a stage of `chain`, `sum`, ...
    pub(crate) nested: bool,
    /// A stage's `times = n`: the retries it schedules before the next.
    pub(crate) times: Option<TimesArg>,
    /// A stage's `for = D`: it ends at the first failure once D has passed.
    pub(crate) lasting: Option<super::compose::ForArg>,
    /// The stages of `chain`, `shorter`, `longer` and `sum`.
    pub(crate) stages: Vec<StrategyArg>,
    /// The delays of `steps`.
    pub(crate) steps: Vec<DurationArg>,
    /// The same strategy as the schedule language's crate reads it, for
    /// its evaluator and defaults.
    pub(crate) schedule: Box<backoff_schedule::Strategy>,
}

/// `times = 3`, with the span of its name.
#[derive(Clone, Copy)]
pub(crate) struct TimesArg {
    pub(crate) value: u64,
    pub(crate) span: Span,
}

impl StrategyArg {
    /// `kind` with nothing given, written at `span`.
    pub(crate) fn new(kind: StrategyKind, span: Span, nested: bool) -> StrategyArg {
        StrategyArg {
            kind,
            span,
            base: None,
            factor: None,
            max: None,
            nested,
            times: None,
            lasting: None,
            stages: Vec::new(),
            steps: Vec::new(),
            schedule: Box::new(backoff_schedule::macro_support::strategy(kind, nested)),
        }
    }

    /// The strategy when none is given.
    pub(crate) fn default_exponential() -> StrategyArg {
        StrategyArg::new(StrategyKind::Exponential, Span::call_site(), false)
    }

    /// The jitter this strategy has when `jitter` is not given: its
    /// kind's; for a composed one, none when every leaf has none (random
    /// by itself, or never waits), else full.
    pub(crate) fn default_jitter(&self) -> JitterKind {
        JitterKind::of(self.schedule.default_jitter()).unwrap_or(JitterKind::Full)
    }
}
