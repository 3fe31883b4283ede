//! Checks of the closures given to `when`, `when_ok`, `on_retry` and
//! `on_giveup`: their arity and the types written on their parameters.

use syn::{Expr, ExprClosure, Pat, ReturnType, Signature, Type};

use crate::attr::{Arg, RetryArgs, ungrouped};
use crate::errors::Errors;

use super::shape::{COPY_PRIMITIVES, result_arguments, ungrouped_type, unnameable};

/// A callable argument: its name, its value, its parameters.
pub(super) type Callable<'a> = (&'static str, Option<&'a Arg<Expr>>, &'static [Param]);

/// The parameters of the callables, described: `when`, `when_ok`,
/// `on_retry`, `on_hedge`, `on_giveup`. A hook keeps its type whatever else
/// the attribute says: under `hedge` too, `on_retry` takes the error (or,
/// beside `when_ok`, the outcome) and the event.
pub(super) fn callables(args: &RetryArgs) -> [Callable<'_>; 5] {
    let on_retry: &[Param] = if args.when_ok.is_some() {
        &[Param::OUTCOME_WITH_WHEN_OK, Param::EVENT]
    } else {
        &[Param::ERROR, Param::EVENT]
    };
    [
        ("when", args.when.as_ref(), &[Param::ERROR]),
        ("when_ok", args.when_ok.as_ref(), &[Param::OK]),
        ("on_retry", args.on_retry.as_ref(), on_retry),
        ("on_hedge", args.on_hedge.as_ref(), &[Param::EVENT]),
        (
            "on_giveup",
            args.on_giveup.as_ref(),
            &[Param::OUTCOME, Param::GIVE_UP],
        ),
    ]
}

/// What a callable's parameter is.
pub(super) struct Param {
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
pub(super) enum Borrowed {
    Ok,
    Err,
    Result,
    /// A public type of the runtime: `RetryEvent`, `GiveUp`.
    Named(&'static str),
}

impl Param {
    const fn new(what: &'static str, ty: &'static str, borrows: Borrowed) -> Param {
        let note = "";
        Param {
            what,
            ty,
            note,
            borrows,
        }
    }
    const ERROR: Param = Param::new("the error", "&E", Borrowed::Err);
    /// `fallback`'s: the error itself.
    const OWNED_ERROR: Param = Param::new("the error", "E", Borrowed::Err);
    const OK: Param = Param::new("the `Ok` value", "&T", Borrowed::Ok);
    const OUTCOME: Param = Param::new("the outcome", "&Result<T, E>", Borrowed::Result);
    const OUTCOME_WITH_WHEN_OK: Param = Param {
        note: " (with `when_ok`)",
        ..Param::OUTCOME
    };
    const EVENT: Param = Param::new("the event", "&RetryEvent", Borrowed::Named("RetryEvent"));
    const GIVE_UP: Param = Param::new("the give-up record", "&GiveUp", Borrowed::Named("GiveUp"));
}

pub(super) fn closure(arg: &Arg<Expr>) -> Option<&ExprClosure> {
    match ungrouped(&arg.value) {
        Expr::Closure(c) => Some(c),
        _ => None,
    }
}

/// The types the hooks' closures declare their parameters with (`&RetryEvent`
/// in `on_retry = |e, ev: &RetryEvent| ..`), but those with a `_` or an
/// `impl`: beside an error, the function is emitted without them, and
/// names them so that their imports are not reported unused.
pub(crate) fn hook_parameter_types(args: &RetryArgs) -> Vec<&Type> {
    [
        &args.when,
        &args.when_ok,
        &args.on_retry,
        &args.on_hedge,
        &args.on_giveup,
        &args.fallback,
        &args.sleep,
    ]
    .into_iter()
    .filter_map(|arg| arg.as_ref().and_then(closure))
    .flat_map(|c| &c.inputs)
    .filter_map(|input| match input {
        Pat::Type(t) if !unnameable(&t.ty) => Some(&*t.ty),
        _ => None,
    })
    .collect()
}

/// A closure given to `when`, `when_ok`, `on_retry` or `on_giveup` takes as
/// many parameters as the call passes: one error on its parameter list.
pub(super) fn check_closure_arity(args: &RetryArgs, errors: &mut Errors) {
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
        // A hook of the event alone, under `hedge`: `on_hedge`'s form.
        let of_the_event = |p: &Pat| match p {
            Pat::Type(t) => quote::ToTokens::to_token_stream(&t.ty)
                .to_string()
                .contains("RetryEvent"),
            Pat::Ident(i) => i.ident == "ev" || i.ident == "event",
            _ => false,
        };
        let hedge = if name == "on_retry"
            && args.hedge.is_some()
            && closure.inputs.len() == 1
            && closure.inputs.first().is_some_and(of_the_event)
        {
            "; a hook of the event alone, called when `hedge`'s delay starts an attempt, is `on_hedge = |event: &RetryEvent| ..`"
        } else {
            ""
        };
        let (or1, inputs, or2) = (&closure.inputs_begin, &closure.inputs, &closure.inputs_end);
        errors.push(syn::Error::new_spanned(
            quote::quote!(#or1 #inputs #or2),
            format!("`{name}` takes {count}, {each}; this closure takes {takes}{hedge}"),
        ));
    }
}

/// A closure parameter annotated with a type that is certainly not the
/// reference the call passes (`|e: FetchError|` for a function returning
/// `Result<_, FetchError>`, `|e: &mut E|`, `|ev: RetryEvent|`): one error
/// on that type. A path that could be an alias of a reference is left to
/// the compiler.
pub(super) fn check_closure_types(sig: &Signature, args: &RetryArgs, errors: &mut Errors) {
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

/// `T` and `E` of a return type written `Result<T, E>`.
pub(super) fn result_types(output: &ReturnType) -> Option<(&Type, &Type)> {
    let mut types = result_arguments(output)?;
    match (types.next(), types.next(), types.next()) {
        (Some(ok), Some(err), None) => Some((ok, err)),
        _ => None,
    }
}

/// Whether `ty`, which is not written as a reference, is certainly not
/// one: a tuple, array, slice, pointer, fn pointer, trait object or `!`; a
/// primitive or `String`; the function's own `T`/`E` (`own`); or the
/// runtime type the parameter borrows (`RetryEvent`, `GiveUp`, `Result`).
pub(super) fn by_value(ty: &Type, own: Option<&Type>, borrows: Borrowed) -> bool {
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
                && COPY_PRIMITIVES
                    .iter()
                    .chain(&["str", "String"])
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
pub(super) fn show_type(ty: &Type) -> Option<String> {
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
