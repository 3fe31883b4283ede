//! The strategy argument (`exponential(base = "100ms", ..)` and its kin),
//! as parsed (`compose.rs`): its parameters, and a stage's `times`.

use std::rc::Rc;

use backoff_schedule::macro_support as schedule;
use proc_macro2::Span;

use super::literal::DurationArg;
use super::names::{JitterKind, StrategyKind};
use super::text::Text;
use crate::errors::Errors;

/// The strategy argument: `exponential(base = "100ms", factor = 2, max = "5s")`.
pub(crate) struct StrategyArg {
    pub(crate) kind: StrategyKind,
    pub(crate) span: Span,
    /// `base`, or the constant's `delay`.
    pub(crate) base: Option<DurationArg>,
    pub(crate) factor: Option<f64>,
    pub(crate) max: Option<DurationArg>,
    /// Inside another form: a stage of `chain`, `sum`, ...
    pub(crate) nested: bool,
    /// A stage's `times = n`: the retries it schedules before the next.
    pub(crate) times: Option<u64>,
    /// A stage's `for = D`: it ends at the first failure once D has passed.
    pub(crate) lasting: Option<DurationArg>,
    /// The stages of `chain`, `shorter`, `longer` and `sum`.
    pub(crate) stages: Vec<StrategyArg>,
    /// The delays of `steps`.
    pub(crate) steps: Vec<DurationArg>,
    /// The same strategy as the schedule language's crate reads it, for
    /// its evaluator and defaults.
    pub(crate) schedule: Box<backoff_schedule::Strategy>,
    /// The attribute's tokens `schedule`'s byte ranges are in.
    pub(super) text: Rc<Text>,
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
            schedule: Box::new(schedule::strategy(kind, nested)),
            text: Rc::default(),
        }
    }

    /// The jitter this strategy has when `jitter` is not given: its
    /// kind's; for a composed one, none when every leaf has none (random
    /// by itself, or never waits), else full.
    pub(crate) fn default_jitter(&self) -> JitterKind {
        JitterKind::of(self.schedule.default_jitter()).unwrap_or(JitterKind::Full)
    }

    /// The checks of this strategy beside its attempt limit, the
    /// schedule language's (`check_strategy_in`), each on its tokens; for
    /// the `main` schedule, beside the `max_elapsed` `deadline` too.
    pub(crate) fn check(
        &self,
        attempts: Option<&super::Arg<super::Attempts>>,
        main: bool,
        deadline: Option<std::time::Duration>,
        errors: &mut Errors,
    ) {
        let attempts = attempts.map(|a| a.value);
        for e in schedule::check_strategy_in(&self.schedule, attempts, main, deadline) {
            errors.push(syn::Error::new(self.text.span(e.span()), e.message()));
        }
    }

    /// The first stage that ends by time, or side of `shorter`/`longer`
    /// that ends: its `for` or `times` (a schedule whose delays depend on
    /// the call).
    pub(crate) fn first_end(&self) -> Option<Span> {
        schedule::first_end(&self.schedule).map(|span| self.text.span(span))
    }
}
