//! Checks of the `on(..)` arms: against each other (a pattern given
//! twice, more arms than the runtime counts), inside each (its strategy,
//! `attempts` and `jitter`), and against the other arguments (`when`
//! needed; `throttled`, `policy`, `hedge` and a top-level strategy
//! refused).

use crate::attr::{OnAction, OnArm, RetryArgs, StrategyKind};
use crate::errors::Errors;

use super::schedule::{check_jitter, check_kind_attempts};

/// The most `on(..)` arms: the runtime's `kind::MAX_KINDS`.
pub(crate) const MAX_ARMS: usize = 8;

/// Checks the `on(..)` arms, if any.
pub(crate) fn check_kinds(args: &RetryArgs, errors: &mut Errors) {
    let Some(first) = args.on.first() else {
        return;
    };
    // (Not when a `when` was written but did not parse: that mistake is
    // reported already.)
    if args.when.is_none() && !args.broken.contains(&"when") {
        errors.push(syn::Error::new(
            first.key,
            "`on(..)` matches the value `when` returns for each error; add `when = classify`, a function from `&E` to your own classification type",
        ));
    }
    if let Some(t) = &args.throttled {
        errors.push(syn::Error::new(
            t.key,
            "`throttled(..)` cannot be combined with `on(..)`; write the throttled schedule as an arm of its own, as in `on(Failure::Throttled, exponential(base = \"500ms\", max = \"30s\"), attempts = 10)`",
        ));
    }
    if let Some(p) = &args.policy {
        errors.push(syn::Error::new(
            p.key,
            "`policy` cannot be combined with `on(..)`; set the kinds on the `Policy` with `Policy::kinds` and return `Decision::Kind(i)` from `when`, or give the strategies in the `on(..)` arms",
        ));
    }
    if let Some(h) = &args.hedge {
        errors.push(syn::Error::new(
            h.key,
            "`hedge` cannot be combined with `on(..)` yet; remove one of them",
        ));
    }
    if let Some(r) = &args.retry_after_max
        && !args
            .on
            .iter()
            .any(|arm| matches!(arm.action, OnAction::After(_)))
        && args.when_ok.is_none()
    {
        errors.push(syn::Error::new(
            r.key,
            "`retry_after_max` bounds the waits of `on(PATTERN, after = EXPR)` arms (and a `when_ok`'s `Decision::RetryAfter`), and there is none, so it would never act; add such an arm, or remove `retry_after_max`",
        ));
    }
    // The top-level `jitter` is for the arms on a schedule without their
    // own (but `decorrelated`, random by itself).
    let takes_it = |arm: &OnArm| {
        matches!(&arm.action, OnAction::Schedule { strategy, jitter: None, .. }
            if strategy.kind != StrategyKind::Decorrelated)
    };
    if let Some(j) = &args.jitter
        && !args.on.iter().any(takes_it)
    {
        errors.push(syn::Error::new(
            j.key,
            "`jitter` beside `on(..)` applies to the arms on a schedule without a `jitter` of their own (not `decorrelated`), and there is none, so it would never act; remove it, or give it to an arm",
        ));
    }
    if let Some(s) = &args.strategy {
        errors.push(syn::Error::new(
            s.span,
            format!(
                "a strategy beside `on(..)` is never used: each arm has its own; move `{}` into the arms that use it",
                s.kind.name()
            ),
        ));
    }
    for (index, arm) in args.on.iter().enumerate() {
        if index == MAX_ARMS {
            errors.push(syn::Error::new(
                arm.key,
                format!("at most {MAX_ARMS} `on(..)` arms are supported; join the patterns that share a schedule with `|`, as in `on(Failure::A | Failure::B, stop)`"),
            ));
        }
        if let Some(earlier) = args.on[..index].iter().find(|a| a.text == arm.text) {
            errors.push(syn::Error::new_spanned(
                &arm.pat,
                format!("`{}` already has an `on(..)` arm; keep one", earlier.text),
            ));
        }
        check_arm(arm, errors);
    }
    // A call keeps one previous delay for its kinds, which only
    // `decorrelated` reads.
    let mut decorrelated = args.on.iter().filter_map(|arm| match &arm.action {
        OnAction::Schedule { strategy, .. } if reads_decorrelated(strategy) => Some(strategy.span),
        _ => None,
    });
    if let (Some(_), Some(second)) = (decorrelated.next(), decorrelated.next()) {
        errors.push(syn::Error::new(
            second,
            "only one `on(..)` arm may retry on `decorrelated`: a call keeps one previous delay for its kinds, and two `decorrelated` arms would read each other's; give this arm another strategy, or join the two patterns with `|`",
        ));
    }
}

/// One arm's strategy, `attempts` and `jitter`.
fn check_arm(arm: &OnArm, errors: &mut Errors) {
    let OnAction::Schedule {
        strategy,
        attempts,
        jitter,
    } = &arm.action
    else {
        return;
    };
    // (Composed or not: each stage's parameters, `times`, ..)
    super::schedule::check_arm_schedule(strategy, attempts.as_ref(), errors);
    if let Some(attempts) = attempts {
        check_kind_attempts(
            attempts,
            "an `on(..)` arm allows at most 255 attempts of its kind",
            "the top-level `attempts` or `max_elapsed`",
            errors,
        );
    }
    if let Some(jitter) = jitter {
        check_jitter(jitter, Some(strategy.kind), errors);
    }
}

/// Whether `strategy` is `decorrelated` or has a `decorrelated` stage.
fn reads_decorrelated(strategy: &backoff_schedule::Strategy) -> bool {
    strategy.kind == StrategyKind::Decorrelated || strategy.stages.iter().any(reads_decorrelated)
}
