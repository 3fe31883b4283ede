//! Checks of composed schedules (`chain`, `steps`, `shorter`, `longer`,
//! `sum`): each stage's own parameters, `times` where it belongs, stages
//! that read their own previous delay, stages the attempt limit never
//! reaches; and `jitter = range(lo, hi)`.

use crate::attr::schedule::{StopAt, stop_at};
use crate::attr::{
    Arg, Attempts, DurationArg, JitterKind, OnAction, RetryArgs, StrategyArg, StrategyKind,
};
use crate::duration;
use crate::errors::Errors;
use backoff_schedule::macro_support::value_checks;

/// Checks the main strategy, composed or not (`throttled`'s is checked
/// with the other arguments, as an `on(..)` arm's).
pub(super) fn check_schedule(args: &RetryArgs, errors: &mut Errors) {
    if let Some(s) = &args.strategy {
        let deadline = args.max_elapsed.as_ref().map(|d| d.value.value);
        s.check(args.attempts.as_ref(), true, deadline, errors);
    }
    if let Some(jitter) = &args.jitter {
        on_arg(
            value_checks::range(jitter.value.to_schedule()),
            jitter,
            errors,
        );
    }
    // (`hedge` refuses both: its attempts start on its own clock.)
    if args.hedge.is_none() {
        check_stop(args, errors);
        check_on_deadline(args, errors);
    }
}

/// `on_deadline = "last_try"` needs a deadline, and time for the try (the
/// schedule language's rule).
fn check_on_deadline(args: &RetryArgs, errors: &mut Errors) {
    let Some(rule) = &args.on_deadline else {
        return;
    };
    let excused = args.broken.contains(&"max_elapsed") || args.policy.is_some();
    let found = value_checks::on_deadline(
        rule.value,
        args.max_elapsed.as_ref().map(|m| m.value.value),
        args.timeout.as_ref().map(|t| t.value.value),
        excused,
    );
    on_arg(found, rule, errors);
}

/// `stop_at_delay`: a rule that can act, before any retry is lost to it.
fn check_stop(args: &RetryArgs, errors: &mut Errors) {
    let Some(stop) = &args.stop_at_delay else {
        return;
    };
    let d = stop.value.value;
    let shown = duration::format(d);
    if args.policy.is_some() {
        return;
    }
    if d.is_zero() {
        return check_positive("stop_at_delay", Some(stop), errors);
    }
    if !args.on.is_empty() {
        check_stop_arms(args, stop, &shown, errors);
        return;
    }
    let attempts = args.attempts.as_ref().map(|a| a.value);
    let strategy = args.strategy.as_ref().map(|s| &*s.schedule);
    for e in value_checks::stop_rule(strategy, d, attempts) {
        let span = match &args.attempts {
            Some(attempts) if e.span() == value_checks::OTHER => attempts.span,
            _ => stop.span,
        };
        errors.push(syn::Error::new(span, e.message()));
    }
}

/// `stop_at_delay` beside `on(..)`: each arm's schedule becomes an attempt
/// count when the code compiles, so no arm may draw its delays at random;
/// an arm whose first delay reaches the stop would never retry, and a rule
/// that no arm's `attempts` lets act is refused.
fn check_stop_arms(args: &RetryArgs, stop: &Arg<DurationArg>, shown: &str, errors: &mut Errors) {
    let mut acts = false;
    let mut refused = false;
    for arm in &args.on {
        let OnAction::Schedule {
            strategy, attempts, ..
        } = &arm.action
        else {
            continue;
        };
        let own = attempts.as_ref().map(|a| a.value);
        let message = match stop_at(Some(strategy), stop.value.value) {
            StopAt::Random => format!(
                "`stop_at_delay` applies to each `on(..)` arm as an attempt count computed when the code compiles, and `{}` draws its delays at random; bound this arm with `attempts = n`, or remove `stop_at_delay`",
                strategy.kind.name()
            ),
            StopAt::Attempts(1) => format!(
                "the first delay of this arm already reaches `stop_at_delay` (`\"{shown}\"`), so it would never retry; write `on({}, stop)`, or raise `stop_at_delay`",
                arm.text
            ),
            StopAt::Attempts(k) if own.is_none() && k > 255 => format!(
                "`stop_at_delay` (`\"{shown}\"`) would end this arm at attempt {k}, past the 255 attempts an arm counts; give the arm `attempts = 255` or less, or lower `stop_at_delay`"
            ),
            StopAt::Attempts(k) => {
                acts |= !matches!(own, Some(Attempts::Limited(n)) if n <= k);
                continue;
            }
            StopAt::Never { .. } => continue,
        };
        refused = true;
        errors.push(syn::Error::new(strategy.span, message));
    }
    if !acts && !refused {
        errors.push(syn::Error::new(
            stop.span,
            format!(
                "`stop_at_delay` (`\"{shown}\"`) never acts: no `on(..)` arm's schedule reaches it before the arm's `attempts` end its retries; lower `stop_at_delay`, or remove it"
            ),
        ));
    }
}

/// Checks an `on(..)` arm's strategy (or `throttled(..)`'s), composed or
/// not, against the arm's own `attempts`.
pub(super) fn check_arm_schedule(
    s: &StrategyArg,
    attempts: Option<&Arg<Attempts>>,
    errors: &mut Errors,
) {
    s.check(attempts, false, None, errors);
    if let Some(span) = s.first_end() {
        errors.push(syn::Error::new(
            span,
            "a stage that ends (`for`, or `times` on a side of `shorter` or `longer`) belongs to the main schedule only: this schedule's retries end with its `attempts`; remove it here, or end the stage with `times` in a `chain`",
        ));
    }
}

/// Checks an attempt limit (the schedule language's check).
pub(super) fn check_attempts(attempts: &Arg<Attempts>, errors: &mut Errors) {
    on_arg(value_checks::attempts(attempts.value), attempts, errors);
}

/// A duration argument that must be above zero (the schedule language's
/// check).
pub(super) fn check_positive(name: &str, d: Option<&Arg<DurationArg>>, errors: &mut Errors) {
    if let Some(d) = d {
        on_arg(value_checks::positive(name, d.value.value), d, errors);
    }
}

/// The schedule language's errors about one argument, on its tokens.
fn on_arg<T>(found: Vec<backoff_schedule::Error>, arg: &Arg<T>, errors: &mut Errors) {
    for e in found {
        let span = if e.span() == value_checks::OTHER {
            arg.key
        } else {
            arg.span
        };
        errors.push(syn::Error::new(span, e.message()));
    }
}

/// An arm's or `throttled(..)`'s `attempts`: a call counts each kind's
/// failures in one byte (the runtime's `kind::MAX_KIND_ATTEMPTS`).
pub(super) fn check_kind_attempts(
    attempts: &Arg<Attempts>,
    most: &str,
    bound: &str,
    errors: &mut Errors,
) {
    check_attempts(attempts, errors);
    if let Attempts::Limited(n) = attempts.value
        && n > 255
    {
        errors.push(syn::Error::new(
            attempts.span,
            format!("{most}, not {n}: a call counts each kind's failures in one byte; write `attempts = 255` or less, or `attempts = unlimited` (bounded by {bound})"),
        ));
    }
}

/// A `jitter` (the top-level one, or an arm's) and the strategy it is for
/// (the schedule language's checks).
pub(super) fn check_jitter(
    jitter: &Arg<JitterKind>,
    strategy: Option<StrategyKind>,
    errors: &mut Errors,
) {
    on_arg(
        value_checks::jitter(jitter.value.to_schedule(), strategy),
        jitter,
        errors,
    );
}
