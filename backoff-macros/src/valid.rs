//! Checks that involve more than one argument, or the function itself.

use syn::visit::Visit;
use syn::{Expr, ExprClosure, Pat, ReturnType, Signature, Type};

use crate::attr::defaults;
use crate::attr::{Arg, Attempts, JitterKind, RetryArgs, StrategyArg, StrategyKind, ungrouped};
use crate::duration;
use crate::errors::Errors;

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
    check_closure_arity(args, errors);
    check_async_closures(args, errors);
    check_timeouts(args, errors);
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
        // (`"spread"` replaces its randomness: it spreads around its
        // mid-range chain.)
        if decorrelated && !matches!(jitter.value, JitterKind::None | JitterKind::Spread) {
            errors.push(syn::Error::new(
                jitter.key,
                "`decorrelated` is random by itself and takes no other `jitter` than `\"spread\"`; remove `jitter`",
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
        ("throttle", "AdaptiveThrottle", &args.throttle),
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

/// A callable argument: its name, its value, its parameters.
type Callable<'a> = (&'static str, Option<&'a Arg<Expr>>, &'static [Param]);

/// The parameters of the callables, described: `when`, `when_ok`,
/// `on_retry`, `on_giveup`.
fn callables(args: &RetryArgs) -> [Callable<'_>; 4] {
    let on_retry: &[Param] = if args.when_ok.is_some() {
        &[Param::OUTCOME_WITH_WHEN_OK, Param::EVENT]
    } else {
        &[Param::ERROR, Param::EVENT]
    };
    [
        ("when", args.when.as_ref(), &[Param::ERROR]),
        ("when_ok", args.when_ok.as_ref(), &[Param::OK]),
        ("on_retry", args.on_retry.as_ref(), on_retry),
        (
            "on_giveup",
            args.on_giveup.as_ref(),
            &[Param::OUTCOME, Param::GIVE_UP],
        ),
    ]
}

/// What a callable's parameter is.
struct Param {
    /// `the error`
    what: &'static str,
    /// `&E`
    ty: &'static str,
    /// After the type: ` (with `when_ok`)`.
    note: &'static str,
    /// Which of the function's `Result<T, E>` it borrows, if any.
    borrows: Borrowed,
}

#[derive(Clone, Copy, PartialEq)]
enum Borrowed {
    Ok,
    Err,
    Result,
    /// A public type of the runtime: `RetryEvent`, `GiveUp`.
    Named(&'static str),
}

impl Param {
    const ERROR: Param = Param {
        what: "the error",
        ty: "&E",
        note: "",
        borrows: Borrowed::Err,
    };
    /// `fallback`'s: the error itself.
    const OWNED_ERROR: Param = Param {
        what: "the error",
        ty: "E",
        note: "",
        borrows: Borrowed::Err,
    };
    const OK: Param = Param {
        what: "the `Ok` value",
        ty: "&T",
        note: "",
        borrows: Borrowed::Ok,
    };
    const OUTCOME: Param = Param {
        what: "the outcome",
        ty: "&Result<T, E>",
        note: "",
        borrows: Borrowed::Result,
    };
    const OUTCOME_WITH_WHEN_OK: Param = Param {
        what: "the outcome",
        ty: "&Result<T, E>",
        note: " (with `when_ok`)",
        borrows: Borrowed::Result,
    };
    const EVENT: Param = Param {
        what: "the event",
        ty: "&RetryEvent",
        note: "",
        borrows: Borrowed::Named("RetryEvent"),
    };
    const GIVE_UP: Param = Param {
        what: "the give-up record",
        ty: "&GiveUp",
        note: "",
        borrows: Borrowed::Named("GiveUp"),
    };
}

fn closure(arg: &Arg<Expr>) -> Option<&ExprClosure> {
    match ungrouped(&arg.value) {
        Expr::Closure(c) => Some(c),
        _ => None,
    }
}

/// A closure given to `when`, `when_ok`, `on_retry` or `on_giveup` takes as
/// many parameters as the call passes: one error on its parameter list.
fn check_closure_arity(args: &RetryArgs, errors: &mut Errors) {
    let fallback: Callable<'_> = (
        "fallback",
        args.fallback.as_ref(),
        &[Param::OWNED_ERROR, Param::GIVE_UP],
    );
    for (name, arg, params) in callables(args).into_iter().chain([fallback]) {
        let Some(closure) = arg.and_then(closure) else {
            continue;
        };
        let given = closure.inputs.len();
        if given == params.len() {
            continue;
        }
        let count = if params.len() == 1 {
            "one parameter"
        } else {
            "two parameters"
        };
        let each = params
            .iter()
            .map(|p| format!("{} `{}`{}", p.what, p.ty, p.note))
            .collect::<Vec<_>>()
            .join(" and ");
        let takes = match given {
            0 => "none".to_owned(),
            n => n.to_string(),
        };
        let (or1, inputs, or2) = (&closure.inputs_begin, &closure.inputs, &closure.inputs_end);
        errors.push(syn::Error::new_spanned(
            quote::quote!(#or1 #inputs #or2),
            format!("`{name}` takes {count}, {each}; this closure takes {takes}"),
        ));
    }
}

/// A closure parameter annotated with a type that is certainly not the
/// reference the call passes (`|e: FetchError|` for a function returning
/// `Result<_, FetchError>`, `|e: &mut E|`, `|ev: RetryEvent|`): one error
/// on that type. A path that could be an alias of a reference is left to
/// the compiler.
fn check_closure_types(sig: &Signature, args: &RetryArgs, errors: &mut Errors) {
    let (ok, err) = result_types(&sig.output).unzip();
    for (name, arg, params) in callables(args) {
        let Some(closure) = arg.and_then(closure) else {
            continue;
        };
        for (input, param) in closure.inputs.iter().zip(params) {
            let Pat::Type(typed) = input else {
                continue;
            };
            let ty = ungrouped_type(&typed.ty);
            let message = match ty {
                Type::Reference(r) if r.mutability.is_some() => format!(
                    "`{name}` takes {} by shared reference, `{}`; remove `mut`",
                    param.what, param.ty
                ),
                Type::Reference(_) | Type::Infer(_) => continue,
                _ => {
                    let own = match param.borrows {
                        Borrowed::Ok => ok,
                        Borrowed::Err => err,
                        Borrowed::Result | Borrowed::Named(_) => None,
                    };
                    if !by_value(ty, own, param.borrows) {
                        continue;
                    }
                    let fix = match show_type(ty) {
                        Some(shown) => format!("write `&{shown}`"),
                        None => format!("write `{}`", param.ty),
                    };
                    format!(
                        "`{name}` takes {} by reference, `{}`, not by value; {fix}",
                        param.what, param.ty
                    )
                }
            };
            errors.push(syn::Error::new_spanned(ty, message));
        }
    }
}

fn ungrouped_type(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => ungrouped_type(&g.elem),
        Type::Paren(p) => ungrouped_type(&p.elem),
        other => other,
    }
}

/// `T` and `E` of a return type written `Result<T, E>`.
fn result_types(output: &ReturnType) -> Option<(&Type, &Type)> {
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    let Type::Path(path) = ungrouped_type(ty) else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(generics) = &last.arguments else {
        return None;
    };
    let mut types = generics.args.iter().filter_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    match (types.next(), types.next(), types.next()) {
        (Some(ok), Some(err), None) => Some((ok, err)),
        _ => None,
    }
}

/// Whether `ty`, which is not written as a reference, is certainly not
/// one: a tuple, array, slice, pointer, fn pointer, trait object or `!`; a
/// primitive or `String`; the function's own `T`/`E` (`own`); or the
/// runtime type the parameter borrows (`RetryEvent`, `GiveUp`, `Result`).
fn by_value(ty: &Type, own: Option<&Type>, borrows: Borrowed) -> bool {
    let same = |a: &Type, b: &Type| {
        quote::ToTokens::to_token_stream(a).to_string()
            == quote::ToTokens::to_token_stream(b).to_string()
    };
    match ty {
        Type::Tuple(_)
        | Type::Array(_)
        | Type::Slice(_)
        | Type::Ptr(_)
        | Type::FnPtr(_)
        | Type::TraitObject(_)
        | Type::ImplTrait(_)
        | Type::Never(_) => true,
        Type::Path(path) if path.qself.is_none() => {
            if own.is_some_and(|own| same(ty, ungrouped_type(own))) {
                return true;
            }
            let Some(last) = path.path.segments.last() else {
                return false;
            };
            let primitive = path.path.segments.len() == 1
                && last.arguments.is_none()
                && [
                    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128",
                    "isize", "f32", "f64", "bool", "char", "str", "String",
                ]
                .iter()
                .any(|p| last.ident == p);
            primitive
                || match borrows {
                    Borrowed::Named(named) => last.ident == named && last.arguments.is_none(),
                    Borrowed::Result => {
                        last.ident == "Result"
                            && matches!(&last.arguments, syn::PathArguments::AngleBracketed(a) if a.args.len() == 2)
                    }
                    Borrowed::Ok | Borrowed::Err => false,
                }
        }
        _ => false,
    }
}

/// A type short enough to repeat in a message.
fn show_type(ty: &Type) -> Option<String> {
    let shown = quote::ToTokens::to_token_stream(ty)
        .to_string()
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",");
    (shown.len() <= 40).then_some(shown)
}

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
                Some(max) => (max.value, "`max`".to_owned()),
                None => (
                    defaults::MAX,
                    format!("the default `max` (`{}`)", defaults::literal(defaults::MAX)),
                ),
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
        && max.value < defaults::BASE
    {
        errors.push(syn::Error::new(
            max.span,
            format!(
                "`max` is below the default `base` (`{}`); raise `max` or give a lower `base`",
                defaults::literal(defaults::BASE)
            ),
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
//
// `blocks_on_body`: whether an attribute above `#[retry]` (`#[tokio::test]`,
// `#[tokio::main]`) has already made the `async fn` a plain fn that blocks
// on its body (see `blocks_on_its_body`).
pub(crate) fn check_signature(
    sig: &Signature,
    is_async: bool,
    blocks_on_body: bool,
    args: &RetryArgs,
    errors: &mut Errors,
) {
    if !is_async {
        for (name, arg) in [
            ("attempt_timeout", &args.attempt_timeout),
            ("timeout", &args.timeout),
        ] {
            if let Some(t) = arg {
                let message = if blocks_on_body {
                    format!(
                        "`{name}` needs an `async fn`, and an attribute above `#[retry]` (such as `#[tokio::test]`) has already made this one a plain fn that blocks on its body; write `#[retry]` above that attribute"
                    )
                } else {
                    format!(
                        "`{name}` needs an `async fn`: a blocking call cannot be cancelled; make the function `async` or remove `{name}`"
                    )
                };
                errors.push(syn::Error::new(t.key, message));
            }
        }
    }
    if let Some(ctx) = &args.context {
        check_context_name(sig, &ctx.value, errors);
    }
    if let Some(sleep) = &args.sleep {
        check_known_sleep(sig, is_async, sleep, errors);
    }
    check_closure_types(sig, args, errors);
    check_mut_borrow_of_self(sig, errors);
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
            if !is_async && let Some(output) = future_output(ty) {
                let fix = match output.and_then(show_type) {
                    Some(output) => format!("make it an `async fn` returning `{output}`"),
                    None => "make it an `async fn` returning the future's output".to_owned(),
                };
                errors.push(syn::Error::new_spanned(
                    ty,
                    format!(
                        "`#[retry]` needs a function that returns `Result`, and this one returns a future; {fix}"
                    ),
                ));
                return;
            }
        }
    }
    if let Some(clone) = &args.clone {
        check_clone(sig, &clone.value, errors);
    }
}

/// Whether a body is one that `#[tokio::test]` or `#[tokio::main]` wrote
/// around an `async fn`'s: it blocks on the original body (`.block_on(body)`).
pub(crate) fn blocks_on_its_body(body: proc_macro2::TokenStream) -> bool {
    body.into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident == "block_on",
        proc_macro2::TokenTree::Group(group) => blocks_on_its_body(group.stream()),
        _ => false,
    })
}

/// Other attributes on the function that `#[retry]` cannot keep the meaning
/// of: a second `#[retry]` (nested loops would multiply the attempts) and
/// `#[track_caller]` (the body runs in a closure, which cannot carry it on
/// stable Rust).
pub(crate) fn check_attributes(attrs: &[syn::Attribute], errors: &mut Errors) {
    for attr in attrs {
        let Some(last) = attr.path().segments.last() else {
            continue;
        };
        if last.ident == "retry" {
            errors.push(syn::Error::new_spanned(
                attr,
                "a second `#[retry]` on this function: nested retries would multiply the attempts (3 attempts of 5 attempts each make 15 calls); combine the arguments into one `#[retry(..)]`",
            ));
        } else if last.ident == "track_caller" && attr.path().segments.len() == 1 {
            errors.push(syn::Error::new_spanned(
                attr,
                "`#[track_caller]` cannot keep its meaning under `#[retry]`: each attempt runs the body in a closure, which stable Rust cannot mark `#[track_caller]`, so panics and `Location::caller()` would name the body instead of the caller; remove `#[track_caller]`, or move the code that needs the caller's location out of the retried function",
            ));
        }
    }
}

/// An `async fn` whose body `#[tracing::instrument]` (placed above
/// `#[retry]`) has already rewritten: it moves `self` into the first
/// attempt's future, which a `&mut self` method cannot do twice.
//
// Likewise a by-value argument of a type that is certainly not `Copy`
// (`String`, `Vec<T>`, ...; see `owns_heap_data`), not in `clone(..)`.
pub(crate) fn check_instrumented(sig: &Signature, args: &RetryArgs, errors: &mut Errors) {
    if let Some(receiver) = sig.receiver()
        && let Some((_, true)) = receiver_borrow(receiver)
    {
        errors.push(syn::Error::new_spanned(
            receiver,
            "`#[tracing::instrument]` is above `#[retry]`: it moves `self` into the future of the first attempt, and a `&mut self` method cannot give it to a second one; put `#[retry]` above `#[tracing::instrument]` (one span for the whole call, retries included)",
        ));
    }
    let cloned = |name: &syn::Ident| args.clone.as_ref().is_some_and(|c| c.value.contains(name));
    for input in &sig.inputs {
        let syn::FnArg::Typed(typed) = input else {
            continue;
        };
        let Pat::Ident(binding) = ungrouped_pat(&typed.pat) else {
            continue;
        };
        if binding.by_ref.is_none() && !cloned(&binding.ident) && owns_heap_data(&typed.ty) {
            let name = &binding.ident;
            errors.push(syn::Error::new(
                name.span(),
                format!("`#[tracing::instrument]` is above `#[retry]`: it moves `{name}` into the future of the first attempt, and a second attempt would have none; put `#[retry]` above `#[tracing::instrument]` (one span for the whole call), or give each attempt a clone with `clone({name})`"),
            ));
        }
    }
}

/// Whether `ty` is, by its name, a standard type that is never `Copy`.
fn owns_heap_data(ty: &Type) -> bool {
    let Type::Path(path) = ungrouped_type(ty) else {
        return false;
    };
    path.qself.is_none()
        && path.path.segments.last().is_some_and(|s| {
            [
                "String", "Vec", "VecDeque", "Box", "PathBuf", "OsString", "HashMap", "HashSet",
                "BTreeMap", "BTreeSet", "Rc", "Arc",
            ]
            .iter()
            .any(|name| s.ident == name)
        })
}

/// `clone(a, b)`: each name must be a by-value parameter, bound by name.
fn check_clone(sig: &Signature, names: &[syn::Ident], errors: &mut Errors) {
    for name in names {
        if name == "self" {
            match sig.receiver() {
                None => errors.push(syn::Error::new(
                    name.span(),
                    format!("`{}` has no `self` parameter to clone", sig.ident),
                )),
                Some(r) if receiver_borrow(r).is_some_and(|(_, mutable)| mutable) => {
                    errors.push(syn::Error::new(
                        name.span(),
                        "`self` is a `&mut` reference here, which is not cloned: remove it from `clone(..)`; if the body gives `self` away (`Parser::new(self)`), give each attempt a reborrow instead, writing `&mut *self` there",
                    ));
                }
                Some(r) if receiver_borrow(r).is_some() => {
                    errors.push(syn::Error::new(
                        name.span(),
                        "`self` is a reference here: every attempt can use it already; remove it from `clone(..)`",
                    ));
                }
                Some(_) => {}
            }
            continue;
        }
        let mut in_pattern = false;
        let mut found = None;
        for input in &sig.inputs {
            let syn::FnArg::Typed(t) = input else {
                continue;
            };
            match ungrouped_pat(&t.pat) {
                Pat::Ident(p) if p.ident == *name && p.subpat.is_none() => {
                    found = Some((p, &*t.ty));
                }
                pat => {
                    let mut finder = IdentFinder { name, found: false };
                    finder.visit_pat(pat);
                    in_pattern |= finder.found;
                }
            }
        }
        match found {
            Some((p, _)) if p.by_ref.is_some() => errors.push(syn::Error::new(
                name.span(),
                format!("`{name}` is bound by `ref`: every attempt can use it already; remove it from `clone(..)`"),
            )),
            Some((_, ty)) if matches!(ungrouped_type(ty), Type::Reference(_)) => {
                errors.push(syn::Error::new(
                    name.span(),
                    format!("`{name}` is a reference: every attempt can use it already; remove it from `clone(..)`"),
                ));
            }
            Some(_) => {}
            None if in_pattern => errors.push(syn::Error::new(
                name.span(),
                format!("`{name}` is bound inside a pattern; `clone(..)` takes parameters bound by name, as in `{name}: T`"),
            )),
            None => {
                let by_value: Vec<String> = sig
                    .inputs
                    .iter()
                    .filter_map(|input| match input {
                        syn::FnArg::Typed(t) => match (ungrouped_pat(&t.pat), ungrouped_type(&t.ty)) {
                            (_, Type::Reference(_)) => None,
                            (Pat::Ident(p), _) => Some(p.ident.to_string()),
                            _ => None,
                        },
                        syn::FnArg::Receiver(r) => {
                            receiver_borrow(r).is_none().then(|| "self".to_owned())
                        }
                    })
                    .collect();
                let known: Vec<&str> = by_value.iter().map(String::as_str).collect();
                let hint = match crate::errors::closest(&name.to_string(), &known) {
                    Some(close) => format!("; did you mean `{close}`?"),
                    None if known.is_empty() => "; it has no by-value parameter".to_owned(),
                    None => format!(
                        "; its by-value parameters are {}",
                        known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                    ),
                };
                errors.push(syn::Error::new(
                    name.span(),
                    format!("`{name}` is not a parameter of `{}`{hint}", sig.ident),
                ));
            }
        }
    }
}

/// A `self` that is a reference (`&self`, `&'a mut self`, `self: &Self`):
/// its lifetime, and whether it is `mut`.
fn receiver_borrow(r: &syn::Receiver) -> Option<(Option<&syn::Lifetime>, bool)> {
    match &r.kind {
        syn::ReceiverKind::Reference(_, lifetime, mutability) => {
            Some((lifetime.as_ref(), mutability.is_some()))
        }
        syn::ReceiverKind::Typed(_, ty) => match ungrouped_type(ty) {
            Type::Reference(t) => Some((t.lifetime.as_ref(), t.mutability.is_some())),
            _ => None,
        },
        _ => None,
    }
}

fn ungrouped_pat(pat: &Pat) -> &Pat {
    match pat {
        Pat::Paren(p) => ungrouped_pat(&p.pat),
        _ => pat,
    }
}

/// Whether the return type may borrow from a parameter whose reference has
/// `lifetime` (`None` when elided): it names that lifetime, or it has an
/// elided one that elision may take from the parameter (no `self`
/// reference to take it from instead).
pub(crate) fn output_may_borrow(sig: &Signature, lifetime: Option<&str>) -> bool {
    let ReturnType::Type(_, ret) = &sig.output else {
        return false;
    };
    let mut out = References::default();
    out.visit_type(ret);
    let self_is_a_reference = sig.receiver().is_some_and(|r| receiver_borrow(r).is_some());
    out.all.iter().any(|(l, _)| match (l, lifetime) {
        (None, _) => !self_is_a_reference,
        (Some(out), Some(param)) => out == param,
        (Some(_), None) => false,
    })
}

/// References and lifetimes in a type: each with its lifetime (`None` when
/// elided) and span.
#[derive(Default)]
struct References {
    all: Vec<(Option<String>, proc_macro2::Span)>,
}

impl<'ast> Visit<'ast> for References {
    fn visit_type_reference(&mut self, node: &'ast syn::TypeReference) {
        let lifetime = node.lifetime.as_ref().map(|l| l.ident.to_string());
        let lifetime = lifetime.filter(|l| l != "_");
        self.all.push((lifetime, node.and_token.span));
        syn::visit::visit_type_reference(self, node);
    }

    fn visit_lifetime(&mut self, node: &'ast syn::Lifetime) {
        let name = node.ident.to_string();
        if name != "static" {
            self.all
                .push(((name != "_").then_some(name), node.apostrophe));
        }
    }

    // `impl Fn(&T) -> &U` and `dyn Fn(..)` bind their own elided lifetimes.
    fn visit_parenthesized_generic_arguments(
        &mut self,
        _: &'ast syn::ParenthesizedGenericArguments,
    ) {
    }

    fn visit_type_fn_ptr(&mut self, _: &'ast syn::TypeFnPtr) {}
}

/// `sleep = PATH` naming a well-known sleep of the other kind: an async
/// runtime's sleep (a future) on a plain fn, or a blocking sleep on an
/// `async fn`. (Other paths are checked by type.)
fn check_known_sleep(sig: &Signature, is_async: bool, sleep: &Arg<Expr>, errors: &mut Errors) {
    let Expr::Path(path) = ungrouped(&sleep.value) else {
        return;
    };
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let Some(last) = segments.last() else {
        return;
    };
    let shown = segments.join("::");
    let async_runtime = segments.len() > 1
        && ["tokio", "async_std", "smol", "futures_timer", "async_io"]
            .contains(&segments[0].as_str());
    let blocking = last == "sleep" && segments.iter().any(|s| s == "thread");
    if !is_async && async_runtime {
        errors.push(syn::Error::new_spanned(
            path,
            format!("`{shown}` returns a future, but `{}` is not an `async fn`: a plain fn sleeps by blocking; remove `sleep` (the default is `std::thread::sleep`), or make the function `async`", sig.ident),
        ));
    } else if is_async && blocking {
        errors.push(syn::Error::new_spanned(
            path,
            format!("`{shown}` blocks the thread, and `{}` is an `async fn`: it would stall the executor; remove `sleep` (the default is `tokio::time::sleep`), or name an async sleep", sig.ident),
        ));
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
        // A name the function does not take already.
        let free = ["ctx", "attempt_ctx", "retry_ctx"]
            .into_iter()
            .find(|n| name != n && !binds(sig, n))
            .unwrap_or("retry_ctx");
        errors.push(syn::Error::new(
            name.span(),
            format!("`{name}` is already a parameter of `{}`; give `context` another name, as in `context = {free}`", sig.ident),
        ));
    }
}

/// Whether a parameter of `sig` binds `name`.
fn binds(sig: &Signature, name: &str) -> bool {
    let name = syn::Ident::new(name, proc_macro2::Span::call_site());
    sig.inputs.iter().any(|input| match input {
        syn::FnArg::Typed(t) => {
            let mut finder = IdentFinder {
                name: &name,
                found: false,
            };
            finder.visit_pat(&t.pat);
            finder.found
        }
        syn::FnArg::Receiver(_) => false,
    })
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

/// For a return type that is a future (`impl Future<Output = R>`,
/// `Pin<Box<dyn Future<Output = R> + Send>>`, `BoxFuture<'_, R>`): `R`, when
/// written.
fn future_output(ty: &Type) -> Option<Option<&Type>> {
    let bounds = match ungrouped_type(ty) {
        Type::ImplTrait(t) => &t.bounds,
        Type::TraitObject(t) => &t.bounds,
        Type::Path(path) => {
            let last = path.path.segments.last()?;
            let syn::PathArguments::AngleBracketed(generics) = &last.arguments else {
                return None;
            };
            let mut types = generics.args.iter().filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            });
            return match last.ident.to_string().as_str() {
                "Pin" | "Box" => future_output(types.next()?),
                "BoxFuture" | "LocalBoxFuture" => Some(types.next()),
                _ => None,
            };
        }
        _ => return None,
    };
    bounds.iter().find_map(|bound| {
        let syn::TypeParamBound::Trait(t) = bound else {
            return None;
        };
        let last = t.path.segments.last()?;
        if last.ident != "Future" {
            return None;
        }
        let syn::PathArguments::AngleBracketed(generics) = &last.arguments else {
            return Some(None);
        };
        Some(generics.args.iter().find_map(|a| match a {
            syn::GenericArgument::AssocType(assoc) if assoc.ident == "Output" => Some(&assoc.ty),
            _ => None,
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(args: &str, item: &str) -> Vec<String> {
        let mut errors = Errors::default();
        let args = RetryArgs::parse(args.parse().unwrap(), &mut errors);
        let func: syn::ItemFn = syn::parse_str(item).unwrap();
        check_args(&args, &mut errors);
        check_signature(
            &func.sig,
            func.sig.asyncness.is_some(),
            false,
            &args,
            &mut errors,
        );
        match errors.finish() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    const ITEM: &str = "fn f() -> Result<u32, FetchError> { Ok(1) }";

    #[test]
    fn closure_parameters_by_value_are_refused() {
        for (args, expect) in [
            ("when = |e: FetchError| true", "write `&FetchError`"),
            ("when = |e: u32| true", "write `&u32`"),
            (
                "when = |(a, b): (u8, u8)| true",
                "takes the error by reference",
            ),
            ("when = |e: &mut FetchError| true", "remove `mut`"),
            (
                "when_ok = |v: u32| false",
                "takes the `Ok` value by reference",
            ),
            ("on_retry = |e, ev: RetryEvent| ()", "write `&RetryEvent`"),
            (
                "on_giveup = |o: Result<u32, FetchError>, g| ()",
                "takes the outcome by reference",
            ),
            (
                "on_giveup = |o, g: backoff_runtime::GiveUp| ()",
                "write `&backoff_runtime::GiveUp`",
            ),
        ] {
            let all = messages(args, ITEM);
            assert_eq!(all.len(), 1, "{args}: {all:?}");
            assert!(all[0].contains(expect), "{args}: {}", all[0]);
        }
    }

    /// A path that may be an alias of a reference (`type Ref<'a> =
    /// &'a FetchError;` compiles as `|e: Ref|`), an inferred or reference
    /// type, and the `E` of an alias such as `io::Result` are left alone.
    #[test]
    fn closure_parameters_that_may_be_references_are_accepted() {
        for (args, item) in [
            ("when = |e: Ref| true", ITEM),
            ("when = |e: &FetchError| true", ITEM),
            ("when = |e: _| true", ITEM),
            ("when = |&FetchError| true", ITEM),
            (
                "when = |e: std::io::Error| true",
                "fn f() -> std::io::Result<()> { Ok(()) }",
            ),
            ("on_retry = |e: &FetchError, ev: &RetryEvent| ()", ITEM),
            ("on_giveup = |o: Outcome, g: &GiveUp| ()", ITEM),
        ] {
            assert_eq!(messages(args, item), Vec::<String>::new(), "{args}");
        }
    }

    #[test]
    fn future_returning_functions_are_told_to_be_async() {
        for item in [
            "fn f() -> impl std::future::Future<Output = Result<u8, E>> { async { Ok(1) } }",
            "fn f() -> Pin<Box<dyn Future<Output = Result<u8, E>> + Send>> { Box::pin(async { Ok(1) }) }",
            "fn f() -> BoxFuture<'static, Result<u8, E>> { todo() }",
        ] {
            let all = messages("", item);
            assert_eq!(all.len(), 1, "{item}: {all:?}");
            assert!(
                all[0].ends_with("make it an `async fn` returning `Result<u8, E>`"),
                "{item}: {}",
                all[0]
            );
        }
        assert_eq!(
            messages("", "async fn f() -> Result<u8, E> { Ok(1) }"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn closure_arity_names_each_parameter() {
        let all = messages("on_retry = |e| ()", ITEM);
        assert_eq!(
            all,
            [
                "`on_retry` takes two parameters, the error `&E` and the event `&RetryEvent`; this closure takes 1"
            ]
        );
        let all = messages("when = || true", ITEM);
        assert_eq!(
            all,
            ["`when` takes one parameter, the error `&E`; this closure takes none"]
        );
    }
}

/// `attempt_timeout` at least `timeout` never acts: the whole call ends
/// first.
fn check_timeouts(args: &RetryArgs, errors: &mut Errors) {
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
fn check_async_closures(args: &RetryArgs, errors: &mut Errors) {
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

/// A `&mut self` method whose `Ok` type holds a `&mut` borrowed from
/// `self`: each attempt borrows `self` anew, and no loop may hand out a
/// unique borrow taken in one iteration while the next borrows again.
fn check_mut_borrow_of_self(sig: &Signature, errors: &mut Errors) {
    let Some((self_lifetime, true)) = sig.receiver().and_then(receiver_borrow) else {
        return;
    };
    let Some(ok) = ok_type(&sig.output) else {
        return;
    };
    let mut found = UniqueBorrows::default();
    found.visit_type(ok);
    let self_lifetime = self_lifetime.map(|l| l.ident.to_string());
    let from_self = found.all.into_iter().find(|(lifetime, _)| match lifetime {
        None => true,
        Some(l) => Some(l) == self_lifetime.as_ref(),
    });
    if let Some((_, tokens)) = from_self {
        errors.push(syn::Error::new_spanned(
            tokens,
            "`#[retry]` cannot return a `&mut` borrowed from `&mut self`: each attempt borrows `self` again, and a unique borrow handed out by one attempt would still hold it (rustc: \"captured variable cannot escape `FnMut` closure body\"); return owned data, or split the method: retry the fallible work in one method and take the `&mut` in a second one, without `#[retry]`",
        ));
    }
}

/// The `Ok` type of a return type written `Result<T, ..>` (or an alias
/// such as `io::Result<T>`).
fn ok_type(output: &ReturnType) -> Option<&Type> {
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    let Type::Path(path) = ungrouped_type(ty) else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(generics) = &last.arguments else {
        return None;
    };
    generics.args.iter().find_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

/// The `&mut` references in a type: each with its lifetime (`None` when
/// elided) and its `&mut` tokens.
#[derive(Default)]
struct UniqueBorrows {
    all: Vec<(Option<String>, proc_macro2::TokenStream)>,
}

impl<'ast> Visit<'ast> for UniqueBorrows {
    fn visit_type_reference(&mut self, node: &'ast syn::TypeReference) {
        if let Some(mutability) = &node.mutability {
            let lifetime = node.lifetime.as_ref().map(|l| l.ident.to_string());
            let and = &node.and_token;
            let lt = &node.lifetime;
            self.all.push((
                lifetime.filter(|l| l != "_"),
                quote::quote!(#and #lt #mutability),
            ));
        }
        syn::visit::visit_type_reference(self, node);
    }

    // `impl FnMut(&mut T)` and `fn(&mut T)` bind their own lifetimes.
    fn visit_parenthesized_generic_arguments(
        &mut self,
        _: &'ast syn::ParenthesizedGenericArguments,
    ) {
    }

    fn visit_type_fn_ptr(&mut self, _: &'ast syn::TypeFnPtr) {}
}
