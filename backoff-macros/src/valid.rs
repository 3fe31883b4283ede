//! Checks that involve more than one argument, or the function itself.

use std::time::Duration;

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{ReturnType, Signature};

use crate::attr::{Arg, Attempts, JitterKind, RetryArgs, StrategyArg, StrategyKind};
use crate::errors::Errors;

/// The cap of the growing strategies when `max` is not given.
const DEFAULT_MAX: Duration = Duration::from_secs(10);

/// Checks the arguments against each other.
pub(crate) fn check_args(args: &RetryArgs, errors: &mut Errors) {
    if let Some(s) = &args.strategy {
        check_strategy(s, errors);
    }
    if let Some(attempts) = &args.attempts {
        check_attempts(attempts, errors);
    }
    if let Some(t) = &args.throttled {
        check_strategy(&t.value.strategy, errors);
        if let Some(attempts) = &t.value.attempts {
            check_attempts(attempts, errors);
        }
        if args.when.is_none() {
            errors.push(syn::Error::new(
                t.key,
                "`throttled` applies to errors that `when` classifies as `Decision::Throttled`; add a `when`",
            ));
        }
    }
    let zero_means = [
        (
            &args.attempt_timeout,
            "an `attempt_timeout` of zero fails every attempt",
        ),
        (&args.timeout, "a `timeout` of zero fails every call"),
        (
            &args.retry_after_max,
            "a `retry_after_max` of zero gives up on every `Decision::RetryAfter`",
        ),
    ];
    for (arg, meaning) in zero_means {
        if let Some(t) = arg
            && t.value.value.is_zero()
        {
            errors.push(syn::Error::new(
                t.span,
                format!("{meaning}; give a positive limit"),
            ));
        }
    }
    if let Some(jitter) = &args.jitter {
        if let JitterKind::Scattered(r) = jitter.value
            && !(r > 0.0 && r <= 1.0)
        {
            errors.push(syn::Error::new(
                jitter.span,
                "the ratio of `scattered` must be above 0 and at most 1, as in `scattered(0.25)`",
            ));
        }
        let decorrelated = args
            .strategy
            .as_ref()
            .is_some_and(|s| s.kind == StrategyKind::Decorrelated);
        if decorrelated && jitter.value != JitterKind::None {
            errors.push(syn::Error::new(
                jitter.key,
                "`decorrelated` is random by itself and takes no `jitter`; remove `jitter`",
            ));
        }
    }
    if let Some(max_elapsed) = &args.max_elapsed
        && max_elapsed.value.value.is_zero()
    {
        errors.push(syn::Error::new(
            max_elapsed.span,
            "`max_elapsed` of zero allows no retry; give a positive limit",
        ));
    }
    for (name, ty, arg) in [
        ("budget", "RetryBudget", &args.budget),
        ("circuit", "CircuitBreaker", &args.circuit),
    ] {
        if let Some(arg) = arg
            && builds(&arg.value, ty)
        {
            errors.push(syn::Error::new_spanned(
                &arg.value,
                format!("this `{ty}` would be a new one for every call, so it would remember nothing between calls; declare a `static` (`static SHARED: {ty} = ...;`, then `{name} = SHARED`) or keep it in a field (`{name} = self.{name}`)"),
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
fn builds(expr: &syn::Expr, ty: &str) -> bool {
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

/// The base of the growing strategies when none is given (the runtime's).
pub(crate) const DEFAULT_BASE: Duration = Duration::from_millis(100);

/// Checks one strategy's parameters.
fn check_strategy(s: &StrategyArg, errors: &mut Errors) {
    if let Some(base) = &s.base {
        if base.value.is_zero() {
            let what = if s.kind == StrategyKind::Constant {
                "the delay of `constant`"
            } else {
                "`base`"
            };
            errors.push(syn::Error::new(
                base.span,
                format!("{what} must be above zero; to retry without waiting, write `immediate`"),
            ));
        } else if s.kind != StrategyKind::Constant {
            let (max, which) = match &s.max {
                Some(max) => (max.value, "`max`"),
                None => (DEFAULT_MAX, "the default `max` (`\"10s\"`)"),
            };
            if base.value > max {
                errors.push(syn::Error::new(
                    base.span,
                    format!("`base` is above {which}; lower `base` or raise `max`"),
                ));
            }
        }
    } else if let Some(max) = &s.max
        && s.kind != StrategyKind::Constant
        && max.value < DEFAULT_BASE
    {
        errors.push(syn::Error::new(
            max.span,
            "`max` is below the default `base` (`\"100ms\"`); raise `max` or give a lower `base`",
        ));
    }
    if let Some(factor) = &s.factor
        && (!factor.value.is_finite() || factor.value <= 1.0)
    {
        errors.push(syn::Error::new(
            factor.span,
            "`factor` must be a finite number above 1, as in `factor = 2` or `factor = 1.5`",
        ));
    }
}

/// Checks an attempt limit.
fn check_attempts(attempts: &Arg<Attempts>, errors: &mut Errors) {
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

/// Checks what the rewrite needs of the function's signature.
pub(crate) fn check_signature(
    sig: &Signature,
    is_async: bool,
    args: &RetryArgs,
    errors: &mut Errors,
) {
    if !is_async {
        for (name, arg) in [
            ("attempt_timeout", &args.attempt_timeout),
            ("timeout", &args.timeout),
        ] {
            if let Some(t) = arg {
                errors.push(syn::Error::new(
                    t.key,
                    format!("`{name}` needs an `async fn`: a blocking call cannot be cancelled; make the function `async` or remove `{name}`"),
                ));
            }
        }
    }
    if let Some(ctx) = &args.context {
        check_context_name(sig, &ctx.value, errors);
    }
    if let (Some(when_ok), ReturnType::Type(_, ty)) = (&args.when_ok, &sig.output)
        && ok_type_is_unit(ty)
    {
        errors.push(syn::Error::new(
            when_ok.key,
            "`when_ok` looks at the `Ok` value, but this function's `Ok` type is `()`: every success would get the same answer; remove `when_ok`, or return the value to inspect",
        ));
    }
    if let Some(constness) = &sig.constness {
        errors.push(syn::Error::new(
            constness.span,
            "`#[retry]` cannot be applied to a `const fn`: retrying sleeps, which a `const fn` cannot do",
        ));
    }
    match &sig.output {
        ReturnType::Default => errors.push(syn::Error::new(
            sig.ident.span(),
            format!(
                "`#[retry]` needs a function that returns `Result`, but `{}` returns `()`",
                sig.ident
            ),
        )),
        ReturnType::Type(_, ty) => {
            let mut finder = ImplTraitFinder(None);
            finder.visit_type(ty);
            if let Some(span) = finder.0 {
                errors.push(syn::Error::new(
                    span,
                    "`#[retry]` does not support `impl Trait` in the return type; name the type, or box it",
                ));
            }
        }
    }
}

/// `context = name` must not hide a parameter, nor be `self`.
fn check_context_name(sig: &Signature, name: &syn::Ident, errors: &mut Errors) {
    if name == "self" || name == "Self" || name == "crate" || name == "super" {
        errors.push(syn::Error::new(
            name.span(),
            format!("`context` needs a name to bind, not `{name}`; write `context = ctx`"),
        ));
        return;
    }
    let hides = sig.inputs.iter().any(|input| match input {
        syn::FnArg::Typed(t) => {
            let mut finder = IdentFinder { name, found: false };
            finder.visit_pat(&t.pat);
            finder.found
        }
        syn::FnArg::Receiver(_) => false,
    });
    if hides {
        errors.push(syn::Error::new(
            name.span(),
            format!("`{name}` is already a parameter of `{}`; give `context` another name, as in `context = ctx`", sig.ident),
        ));
    }
}

/// Finds a binding named `name` in a pattern.
struct IdentFinder<'a> {
    name: &'a syn::Ident,
    found: bool,
}

impl<'ast> Visit<'ast> for IdentFinder<'_> {
    fn visit_pat_ident(&mut self, node: &'ast syn::PatIdent) {
        self.found |= node.ident == *self.name;
        syn::visit::visit_pat_ident(self, node);
    }
}

/// Whether `ty` is, syntactically, a `Result` (or alias) whose `Ok` type is
/// `()`: `Result<(), E>`, `io::Result<()>`.
fn ok_type_is_unit(ty: &syn::Type) -> bool {
    let syn::Type::Path(path) = ty else {
        return false;
    };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    matches!(
        args.args.first(),
        Some(syn::GenericArgument::Type(syn::Type::Tuple(t))) if t.elems.is_empty()
    )
}

/// Finds `impl Trait` in a type.
struct ImplTraitFinder(Option<proc_macro2::Span>);

impl<'ast> Visit<'ast> for ImplTraitFinder {
    fn visit_type_impl_trait(&mut self, node: &'ast syn::TypeImplTrait) {
        self.0.get_or_insert(node.span());
    }
}
