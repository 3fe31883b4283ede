//! Checks of what the rewrite needs of the function: its signature, its
//! other attributes, `sleep` and `context` against it, and the borrows
//! its `Ok` type may hold.

use syn::visit::Visit;
use syn::{Expr, Pat, ReturnType, Signature, Type};

use crate::attr::{Arg, RetryArgs, ungrouped};
use crate::errors::Errors;

use super::clone::check_clone;
use super::closures::{check_closure_types, show_type};
use super::hedge;
use super::shape::{
    COPY_PRIMITIVES, IdentFinder, last_with_types, receiver_borrow, ungrouped_pat, ungrouped_type,
};

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
    super::borrows::check_unique_borrows(sig, is_async, errors);
    super::generic::check_generic_error(sig, is_async, args, errors);
    hedge::check_hedge(sig, is_async, args, errors);
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
            if let Some(shown) = certainly_not_a_result(ty) {
                errors.push(syn::Error::new_spanned(
                    ty,
                    format!(
                        "`#[retry]` needs a function that returns `Result`, but `{}` returns `{shown}`; `#[retry]` retries on `Err`: wrap the value in `Result<{shown}, E>` or return an alias such as `std::io::Result<T>`",
                        sig.ident
                    ),
                ));
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
pub(super) fn owns_heap_data(ty: &Type) -> bool {
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

/// A return type that is by its form no `Result` (a primitive, `Option`,
/// `Vec`, `String`, a tuple, an array, a reference, a pointer): shown.
/// (Another is checked by type, aliases included.)
fn certainly_not_a_result(ty: &Type) -> Option<String> {
    let not = match ungrouped_type(ty) {
        Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
            let name = &p.path.segments[0].ident;
            COPY_PRIMITIVES
                .iter()
                .chain(&["str", "Option", "Vec", "String"])
                .any(|n| name == n)
        }
        Type::Tuple(t) => !t.elems.is_empty(),
        Type::Array(_) | Type::Slice(_) | Type::Reference(_) | Type::Ptr(_) | Type::FnPtr(_) => {
            true
        }
        _ => false,
    };
    not.then(|| show_type(ty).unwrap_or_else(|| "_".to_owned()))
}

/// Whether the return type may borrow from a parameter whose reference has
/// `lifetime` (`None` when elided): it names that lifetime, or it has an
/// elided one that elision may take from the parameter (no `self`
/// reference to take it from instead).
pub(crate) fn output_may_borrow(sig: &Signature, lifetime: Option<&str>) -> bool {
    let ReturnType::Type(_, ret) = &sig.output else {
        return false;
    };
    let mut out = super::borrows::Unique {
        shared: true,
        every_lifetime: true,
        ..Default::default()
    };
    out.visit_type(ret);
    let self_is_a_reference = sig.receiver().is_some_and(|r| receiver_borrow(r).is_some());
    out.all.iter().any(|(l, _)| match (l, lifetime) {
        (None, _) => !self_is_a_reference,
        (Some(out), Some(param)) => out == param,
        (Some(_), None) => false,
    })
}

/// `sleep = PATH` naming a well-known sleep of the other kind: an async
/// runtime's sleep (a future) on a plain fn, or a blocking sleep on an
/// `async fn`. (Other paths are checked by type.)
pub(super) fn check_known_sleep(
    sig: &Signature,
    is_async: bool,
    sleep: &Arg<Expr>,
    errors: &mut Errors,
) {
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
pub(super) fn check_context_name(sig: &Signature, name: &syn::Ident, errors: &mut Errors) {
    if name == "self" || name == "Self" || name == "crate" || name == "super" {
        errors.push(syn::Error::new(
            name.span(),
            format!("`context` needs a name to bind, not `{name}`; write `context = ctx`"),
        ));
        return;
    }
    if binds(sig, name) {
        // A name the function does not take already.
        let free = ["ctx", "attempt_ctx", "retry_ctx"]
            .into_iter()
            .find(|n| name != n && !binds(sig, &syn::Ident::new(n, name.span())))
            .unwrap_or("retry_ctx");
        errors.push(syn::Error::new(
            name.span(),
            format!("`{name}` is already a parameter of `{}`; give `context` another name, as in `context = {free}`", sig.ident),
        ));
    }
}

/// Whether a parameter of `sig` binds `name`.
pub(super) fn binds(sig: &Signature, name: &syn::Ident) -> bool {
    sig.inputs.iter().any(|input| match input {
        syn::FnArg::Typed(t) => {
            let mut finder = IdentFinder { name, found: false };
            finder.visit_pat(&t.pat);
            finder.found
        }
        syn::FnArg::Receiver(_) => false,
    })
}

/// Whether `ty` is, syntactically, a `Result` (or alias) whose `Ok` type is
/// `()`: `Result<(), E>`, `io::Result<()>`.
pub(super) fn ok_type_is_unit(ty: &syn::Type) -> bool {
    let syn::Type::Path(path) = ty else {
        return false;
    };
    let first = last_with_types(&path.path).and_then(|(_, types)| types.first().copied());
    matches!(first, Some(syn::Type::Tuple(t)) if t.elems.is_empty())
}

/// For a return type that is a future (`impl Future<Output = R>`,
/// `Pin<Box<dyn Future<Output = R> + Send>>`, `BoxFuture<'_, R>`): `R`, when
/// written.
pub(super) fn future_output(ty: &Type) -> Option<Option<&Type>> {
    let bounds = match ungrouped_type(ty) {
        Type::ImplTrait(t) => &t.bounds,
        Type::TraitObject(t) => &t.bounds,
        Type::Path(path) => {
            let (name, types) = last_with_types(&path.path)?;
            return match name.to_string().as_str() {
                "Pin" | "Box" => future_output(types.first().copied()?),
                "BoxFuture" | "LocalBoxFuture" => types.first().copied().map(Some),
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
