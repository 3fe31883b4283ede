//! Checks of the arguments against each other: strategies, attempt
//! limits, timeouts, closures that must not be `async`.

use crate::attr::{RetryArgs, ungrouped};
use crate::duration;
use crate::errors::Errors;

use super::closures::{callables, check_closure_arity, closure};

/// Checks the arguments against each other.
pub(crate) fn check_args(args: &RetryArgs, errors: &mut Errors) {
    super::schedule::check_schedule(args, errors);
    if let Some(attempts) = &args.attempts {
        super::schedule::check_attempts(attempts, errors);
    }
    if let Some(t) = &args.throttled {
        // (Composed or not: each stage's parameters, `times`, ..; as an
        // `on(..)` arm's schedule.)
        super::schedule::check_arm_schedule(&t.value.strategy, t.value.attempts.as_ref(), errors);
        if let Some(attempts) = &t.value.attempts {
            super::schedule::check_kind_attempts(
                attempts,
                "`throttled` allows at most 255 throttled attempts",
                "`max_elapsed`",
                errors,
            );
        }
        // (Not when a `when` was written but did not parse, or an unknown
        // argument was probably meant to be `when`: that mistake is
        // reported already.)
        if args.when.is_none() && !args.broken.contains(&"when") {
            errors.push(syn::Error::new(
                t.key,
                "`throttled` applies to errors that `when` classifies as `Decision::Throttled`; add a `when`",
            ));
        }
    }
    for (name, arg) in [
        ("attempt_timeout", &args.attempt_timeout),
        ("timeout", &args.timeout),
        ("retry_after_max", &args.retry_after_max),
        ("reset_after", &args.reset_after),
    ] {
        super::schedule::check_positive(name, arg.as_ref(), errors);
    }
    super::kinds::check_kinds(args, errors);
    if let Some(preset) = &args.preset {
        let by = [
            ("on(..)", !args.on.is_empty()),
            ("policy", args.policy.is_some()),
            ("hedge", args.hedge.is_some()),
        ];
        for (name, _) in by.iter().filter(|(_, given)| *given) {
            errors.push(syn::Error::new(
                preset.key,
                format!("`preset` fills the strategy, `attempts` and `jitter`, which `{name}` sets by itself; remove `preset`"),
            ));
        }
    }
    check_closure_arity(args, errors);
    check_async_closures(args, errors);
    check_timeouts(args, errors);
    if let Some(jitter) = &args.jitter {
        super::schedule::check_jitter(jitter, args.strategy.as_ref().map(|s| s.kind), errors);
    }
    super::schedule::check_positive("max_elapsed", args.max_elapsed.as_ref(), errors);
    for (name, ty, arg) in [
        ("budget", "RetryBudget", &args.budget),
        ("circuit", "CircuitBreaker", &args.circuit),
        ("throttle", "AdaptiveThrottle", &args.throttle),
    ] {
        let Some(arg) = arg else { continue };
        if builds(&arg.value, ty) {
            errors.push(syn::Error::new_spanned(
                &arg.value,
                format!("this `{ty}` would be a new one for every call, so it would remember nothing between calls; declare a `static` (`static SHARED: {ty} = ...;`, then `{name} = SHARED`) or keep it in a field (`{name} = self.{name}`)"),
            ));
        } else if let Some(message) = fleet_builder(&arg.value, name) {
            errors.push(syn::Error::new_spanned(&arg.value, message));
        } else if let Some(callee) = constructor(&arg.value) {
            errors.push(syn::Error::new_spanned(
                &arg.value,
                format!("`{callee}(..)` would build a new value for every call, so its `{ty}` would remember nothing between calls; build it once, in a `static` (`static SHARED: LazyLock<{ty}> = LazyLock::new(|| ...);`, then `{name} = &*SHARED`) or in a field (`{name} = &*self.{name}`)"),
            ));
        }
    }
    if args.policy.is_some() {
        let mixed = [
            ("strategy", args.strategy.as_ref().map(|s| s.span)),
            ("attempts", args.attempts.as_ref().map(|a| a.key)),
            ("jitter", args.jitter.as_ref().map(|a| a.key)),
            ("max_elapsed", args.max_elapsed.as_ref().map(|a| a.key)),
            ("throttled", args.throttled.as_ref().map(|a| a.key)),
            (
                "retry_after_max",
                args.retry_after_max.as_ref().map(|a| a.key),
            ),
            ("stop_at_delay", args.stop_at_delay.as_ref().map(|a| a.key)),
            ("on_deadline", args.on_deadline.as_ref().map(|a| a.key)),
            ("reset_after", args.reset_after.as_ref().map(|a| a.key)),
        ];
        for (name, span) in mixed {
            if let Some(span) = span {
                let what = if name == "strategy" {
                    "a strategy".to_owned()
                } else {
                    format!("`{name}`")
                };
                errors.push(syn::Error::new(
                    span,
                    format!("{what} cannot be combined with `policy`, which sets it; set it on the `Policy` instead"),
                ));
            }
        }
    }
}

/// Whether `expr` builds a `ty` on the spot (`RetryBudget::new(..)`, a
/// struct literal), which the attribute would evaluate anew for each call.
pub(super) fn builds(expr: &syn::Expr, ty: &str) -> bool {
    let path = match expr {
        syn::Expr::Group(g) => return builds(&g.expr, ty),
        syn::Expr::Paren(p) => return builds(&p.expr, ty),
        syn::Expr::Reference(r) => return builds(&r.expr, ty),
        syn::Expr::Call(call) => match &*call.func {
            syn::Expr::Path(p) => &p.path,
            _ => return false,
        },
        syn::Expr::Struct(s) => &s.path,
        _ => return false,
    };
    path.segments.iter().any(|s| s.ident == ty)
}

/// A fleet's builder called in the attribute (`PAYMENTS.quorum(2)`,
/// `STORE.breaker("payments", ..)`): a new shared value for every call.
fn fleet_builder(expr: &syn::Expr, name: &str) -> Option<String> {
    let syn::Expr::MethodCall(call) = ungrouped(expr) else {
        return None;
    };
    let method = call.method.to_string();
    let shown = quote::ToTokens::to_token_stream(&*call.receiver).to_string();
    match method.as_str() {
        "quorum" => Some(format!(
            "`.quorum(..)` builds a new shared breaker for every call, which would remember nothing between calls; set the quorum where the breaker is built once: `static PAYMENTS: LazyLock<SharedBreaker> = LazyLock::new(|| STORE.breaker(\"payments\", ..).quorum(2));`, then `{name} = {shown}`"
        )),
        // (A store's constructor: its second argument builds the control. A
        // lookup of one's own, `self.pool.breaker(host, region)`, is left.)
        "breaker" | "budget" | "throttle"
            if call.args.len() == 2 && constructor(&call.args[1]).is_some() =>
        {
            Some(format!(
                "`.{method}(name, ..)` makes a new shared value for every call, which would remember nothing between calls; make it once, in a `static` (`static SHARED: LazyLock<..> = LazyLock::new(|| {shown}.{method}(..));`, then `{name} = &*SHARED`) or in a field"
            ))
        }
        _ => None,
    }
}

/// The callee of `expr` if it is a constructor's call, which the attribute
/// would evaluate anew for each call: `Arc::new(..)`, `Rc::new(..)`,
/// `Box::new(..)`, `Type::new(..)`, `Type::new_*(..)`, `Type::default()`,
/// `Type::from(..)`, `Default::default()` (under any `&`).
pub(super) fn constructor(expr: &syn::Expr) -> Option<String> {
    match expr {
        syn::Expr::Group(g) => constructor(&g.expr),
        syn::Expr::Paren(p) => constructor(&p.expr),
        syn::Expr::Reference(r) => constructor(&r.expr),
        syn::Expr::Call(call) => {
            let syn::Expr::Path(p) = &*call.func else {
                return None;
            };
            let segments: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let last = segments.last()?;
            let builds = segments.len() >= 2
                && (last == "new"
                    || last.starts_with("new_")
                    || last == "default"
                    || last == "from"
                    || last == "with_capacity");
            builds.then(|| segments.join("::"))
        }
        _ => None,
    }
}

/// `attempt_timeout` at least `timeout` never acts: the whole call ends
/// first.
pub(super) fn check_timeouts(args: &RetryArgs, errors: &mut Errors) {
    if let (Some(attempt), Some(call)) = (&args.attempt_timeout, &args.timeout)
        && attempt.value.value >= call.value.value
        && !call.value.value.is_zero()
    {
        errors.push(syn::Error::new(
            attempt.span,
            format!(
                "`attempt_timeout` of `{}` never acts under a `timeout` of `{}`: the whole call ends first; give `attempt_timeout` less than `timeout`, or remove it",
                duration::format(attempt.value.value),
                duration::format(call.value.value),
            ),
        ));
    }
}

/// A hook written as an `async` closure: the loop calls it and uses what it
/// returns at once, so its body would never run.
pub(super) fn check_async_closures(args: &RetryArgs, errors: &mut Errors) {
    for (name, arg, _) in callables(args) {
        if let Some(asyncness) = arg.and_then(closure).and_then(|c| c.asyncness) {
            errors.push(syn::Error::new(
                asyncness.span,
                format!(
                    "`{name}` cannot be an `async` closure: the loop calls it and uses what it returns at once, without awaiting it; remove `async` (do the async work in the function's body)"
                ),
            ));
        }
    }
}
