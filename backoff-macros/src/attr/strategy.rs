//! The strategy argument (`exponential(base = "100ms", ..)` and its kin),
//! as the schedule language's crate read it (`compose.rs`), with the
//! tokens its byte ranges are in.

use std::ops::Deref;
use std::rc::Rc;

use backoff_schedule::macro_support as schedule;
use proc_macro2::Span;

use super::names::JitterKind;
use super::text::Text;
use crate::errors::Errors;

/// The strategy argument: `exponential(base = "100ms", factor = 2, max = "5s")`.
/// Its kind, parameters and stages are the schedule language's
/// (`backoff_schedule::Strategy`, which it dereferences to).
pub(crate) struct StrategyArg {
    /// Its name's span.
    pub(crate) span: Span,
    pub(crate) schedule: Box<backoff_schedule::Strategy>,
    /// The attribute's tokens `schedule`'s byte ranges are in.
    pub(super) text: Rc<Text>,
}

impl Deref for StrategyArg {
    type Target = backoff_schedule::Strategy;

    fn deref(&self) -> &backoff_schedule::Strategy {
        &self.schedule
    }
}

impl StrategyArg {
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
