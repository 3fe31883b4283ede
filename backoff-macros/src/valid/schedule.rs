//! Checks of composed schedules (`chain`, `steps`, `shorter`, `longer`,
//! `sum`): each stage's own parameters, `times` where it belongs, stages
//! that read their own previous delay, stages the attempt limit never
//! reaches; and `jitter = range(lo, hi)`.

use crate::attr::schedule::{HORIZON, StopAt, stop_at};
use crate::attr::{Arg, Attempts, JitterKind, OnAction, RetryArgs, StrategyArg, StrategyKind};
use crate::duration;
use crate::errors::Errors;

/// Checks the main strategy, composed or not (`throttled`'s is checked
/// with the other arguments, as an `on(..)` arm's).
pub(super) fn check_schedule(args: &RetryArgs, errors: &mut Errors) {
    if let Some(s) = &args.strategy {
        s.check(errors);
        let deadline = args.max_elapsed.as_ref().map(|d| d.value.value);
        s.check_beside(args.attempts.as_ref(), deadline, errors);
        let marks = s.marks();
        if marks > 4 {
            errors.push(syn::Error::new(
                s.span,
                format!(
                    "this schedule has {marks} stage boundaries placed by time (the end of each stage of `chain` that lasts `for` a time or comes before one that does), and a call keeps at most 4; use fewer stages up to the last `for`"
                ),
            ));
        }
    }
    if let Some(jitter) = &args.jitter {
        check_range(jitter, errors);
    }
    // (`hedge` refuses both: its attempts start on its own clock.)
    if args.hedge.is_none() {
        check_stop(args, errors);
        check_on_deadline(args, errors);
    }
}

/// `on_deadline = "last_try"` needs a deadline, and time for the try.
fn check_on_deadline(args: &RetryArgs, errors: &mut Errors) {
    let Some(rule) = &args.on_deadline else {
        return;
    };
    let Some(max_elapsed) = &args.max_elapsed else {
        if !args.broken.contains(&"max_elapsed") && args.policy.is_none() {
            errors.push(syn::Error::new(
                rule.key,
                "`on_deadline` says what happens at the `max_elapsed` deadline, and there is none; add `max_elapsed = \"30s\"`, or remove `on_deadline`",
            ));
        }
        return;
    };
    if rule.value
        && let Some(timeout) = &args.timeout
        && timeout.value.value <= max_elapsed.value.value
    {
        errors.push(syn::Error::new(
            rule.span,
            format!(
                "`on_deadline = \"last_try\"` would have no time for its try: the `timeout` of `\"{}\"` ends the call no later than the `max_elapsed` deadline of `\"{}\"`; give `timeout` more than `max_elapsed`, or remove `on_deadline`",
                duration::format(timeout.value.value),
                duration::format(max_elapsed.value.value),
            ),
        ));
    }
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
        errors.push(syn::Error::new(
            stop.span,
            "a `stop_at_delay` of zero allows no retry; give a positive delay",
        ));
        return;
    }
    if !args.on.is_empty() {
        check_stop_arms(args, stop, &shown, errors);
        return;
    }
    let strategy = args.strategy.as_ref();
    let cap = crate::attr::schedule::max(strategy.unwrap_or(&StrategyArg::default_exponential()));
    match stop_at(strategy, d) {
        StopAt::Random if cap < d => errors.push(never_stops(stop, &shown, cap)),
        StopAt::Random => {}
        StopAt::Never { max } if max < d => errors.push(never_stops(stop, &shown, max)),
        StopAt::Never { .. } => errors.push(syn::Error::new(
            stop.span,
            format!(
                "no delay reaches `stop_at_delay` (`\"{shown}\"`) within {HORIZON} retries; lower `stop_at_delay`, or give `attempts` instead"
            ),
        )),
        StopAt::Attempts(1) => errors.push(syn::Error::new(
            stop.span,
            format!(
                "the first delay already reaches `stop_at_delay` (`\"{shown}\"`), so no retry would ever run; raise `stop_at_delay` above the first delay"
            ),
        )),
        StopAt::Attempts(k) => {
            if let Some(attempts) = &args.attempts
                && let Attempts::Limited(n) = attempts.value
                && n <= k
            {
                errors.push(syn::Error::new(
                    attempts.span,
                    format!(
                        "`attempts = {n}` always ends the call before `stop_at_delay` (`\"{shown}\"`) can act: the first delay to reach it is retry {k}'s, and {n} attempts allow {} {}; remove `attempts`, or raise it above {k}",
                        n.saturating_sub(1),
                        if n == 2 { "retry" } else { "retries" }
                    ),
                ));
            }
        }
    }
}

/// `stop_at_delay` beside `on(..)`: each arm's schedule becomes an attempt
/// count when the code compiles, so no arm may draw its delays at random;
/// an arm whose first delay reaches the stop would never retry, and a rule
/// that no arm's `attempts` lets act is refused.
fn check_stop_arms(
    args: &RetryArgs,
    stop: &Arg<crate::attr::DurationArg>,
    shown: &str,
    errors: &mut Errors,
) {
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

/// A schedule capped below the stop never reaches it.
fn never_stops(
    stop: &Arg<crate::attr::DurationArg>,
    shown: &str,
    max: std::time::Duration,
) -> syn::Error {
    syn::Error::new(
        stop.span,
        format!(
            "`stop_at_delay` (`\"{shown}\"`) is above the schedule's `max` (`\"{}\"`), which no delay exceeds, so the rule would never stop the call; lower `stop_at_delay` to `\"{}\"` or less, or raise `max`",
            duration::format(max),
            duration::format(max),
        ),
    )
}

/// One strategy and its stages; `within` is the form it is a stage of.
/// Checks an `on(..)` arm's strategy (or `throttled(..)`'s), composed or
/// not, against the arm's own `attempts`.
pub(super) fn check_arm_schedule(
    s: &StrategyArg,
    attempts: Option<&Arg<Attempts>>,
    errors: &mut Errors,
) {
    s.check(errors);
    s.check_beside(attempts, None, errors);
    if let Some(span) = s.first_end() {
        errors.push(syn::Error::new(
            span,
            "a stage that ends (`for`, or `times` on a side of `shorter` or `longer`) belongs to the main schedule only: this schedule's retries end with its `attempts`; remove it here, or end the stage with `times` in a `chain`",
        ));
    }
}

/// `range(lo, hi)`: `0 ≤ lo ≤ hi`, both finite.
fn check_range(jitter: &Arg<JitterKind>, errors: &mut Errors) {
    let JitterKind::Range(lo, hi) = jitter.value else {
        return;
    };
    let message = if !lo.is_finite() || !hi.is_finite() {
        "the bounds of `range` must be finite numbers, as in `range(0.5, 1.5)`"
    } else if lo > f64::from(f32::MAX) || hi > f64::from(f32::MAX) {
        // (The runtime keeps them as `f32`.)
        "the bounds of `range` multiply the delay and must be at most 3.4e38, as in `range(0.5, 1.5)`"
    } else if lo < 0.0 || hi < 0.0 {
        "the bounds of `range` multiply the delay and cannot be negative; write `range(0, ..)` for waits from zero"
    } else if lo > hi {
        "the lower bound of `range` is above the upper one; write the smaller first, as in `range(0.5, 1.5)`"
    } else {
        return;
    };
    errors.push(syn::Error::new(jitter.span, message));
}

/// Checks an attempt limit.
pub(super) fn check_attempts(attempts: &Arg<Attempts>, errors: &mut Errors) {
    if let Attempts::Limited(n) = attempts.value {
        if n == 0 {
            errors.push(syn::Error::new(
                attempts.span,
                "`attempts = 0` would never call the function; `attempts` counts calls, the first included, so it must be at least 1",
            ));
        } else if n > u64::from(u32::MAX) {
            errors.push(syn::Error::new(
                attempts.span,
                crate::attr::attempts_out_of_range(n),
            ));
        }
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

/// A `jitter` (the top-level one, or an arm's) and the strategy it is for.
pub(super) fn check_jitter(
    jitter: &Arg<JitterKind>,
    strategy: Option<StrategyKind>,
    errors: &mut Errors,
) {
    if let JitterKind::Scattered(r) = jitter.value
        && !(r > 0.0 && r <= 1.0)
    {
        errors.push(syn::Error::new(
            jitter.span,
            "the ratio of `scattered` must be above 0 and at most 1, as in `scattered(0.25)`",
        ));
    }
    // (`"spread"` replaces its randomness: it spreads around its
    // mid-range chain.)
    if strategy == Some(StrategyKind::Decorrelated)
        && !matches!(jitter.value, JitterKind::None | JitterKind::Spread)
    {
        errors.push(syn::Error::new(
            jitter.key,
            "`decorrelated` is random by itself and takes no other `jitter` than `\"spread\"`; remove `jitter`",
        ));
    }
}
