//! The hooks, `when`, `when_ok`, `on_retry` and `on_giveup`: their
//! closures, given the parameter types the user left out, and their calls.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::{Expr, Ident, Pat, Type};

use super::names::{Names, local, lt_at, p_at, user};
use crate::attr::Arg;

// Input:  the value of `when`, `when_ok`, `on_retry` or `on_giveup`, and the
//         types of the parameters the call passes.
// Output: a closure with a type on each parameter the user left without one
//         (`|e| ..` and `|e: &_| ..` become `|e: &E| ..`), so its body can
//         use them; any other value unchanged. A parameter written with
//         another type is reported where the loop calls the hook, in the
//         argument's terms.
pub(super) fn typed_closure<const N: usize>(
    expr: &Expr,
    types: impl FnOnce() -> [TokenStream; N],
) -> TokenStream {
    typed(expr, types).0
}

/// [`typed_closure`], and whether it is a closure that the attribute gave
/// every parameter's type: its arguments then need no check (their types
/// are the ones the call passes), only its result does.
fn typed<const N: usize>(
    expr: &Expr,
    types: impl FnOnce() -> [TokenStream; N],
) -> (TokenStream, bool) {
    let Expr::Closure(closure) = crate::attr::ungrouped(expr) else {
        return (expr.to_token_stream(), false);
    };
    let types = types();
    let mut closure = closure.clone();
    let mut all_given = closure.inputs.len() == N;
    for (input, ty) in closure.inputs.iter_mut().zip(types) {
        let ty = Box::new(Type::Verbatim(ty));
        match input {
            Pat::Type(typed) if is_inferred(&typed.ty) => typed.ty = ty,
            Pat::Type(_) => all_given = false,
            _ => {
                *input = Pat::Type(syn::PatType {
                    attrs: Vec::new(),
                    pat: Box::new(input.clone()),
                    colon_token: Default::default(),
                    ty,
                });
            }
        }
    }
    (closure.to_token_stream(), all_given)
}

/// `_` or `&_`: a type the user left to inference.
fn is_inferred(ty: &Type) -> bool {
    match ty {
        Type::Infer(_) => true,
        Type::Reference(r) => r.mutability.is_none() && matches!(*r.elem, Type::Infer(_)),
        Type::Group(g) => is_inferred(&g.elem),
        Type::Paren(p) => is_inferred(&p.elem),
        _ => false,
    }
}

// Each hook is evaluated where it is called, as in a loop written by hand
// (a closure may use `self` and the `&mut` arguments the body uses too),
// bound in a block of its own there, and called with each argument through
// a trait of its own, so that a function of the wrong type is reported in
// the argument's terms. A closure whose parameters the attribute typed
// itself (`|e, ev| ..`) takes its arguments as they are: they have its
// types.

// Input:  `when = W`; `__backoff_error` is the error, a `&E`.
// Output: IntoDecision::into_decision(WhenFn::call(&mut {W}, pass(error)))
//         (for a closure `{ let when = W; into_decision({when}(pass(error))) }`),
//         or, without `when`, `Decision::Retry`.
pub(super) fn decision(n: &Names<'_>) -> TokenStream {
    let p = &n.p;
    let Some(w) = &n.args.when else {
        return quote!(#p::Decision::Retry);
    };
    let (mut typed, given) = typed(&w.value, || [n.error_ty()]);
    // A path beside a generic error type `E`: a function pointer of `&E`,
    // so a `when` of another type is rustc's plain "expected fn pointer
    // `fn(&E) -> _`" at it, not a suggested `where` bound on a check trait.
    if !is_closure(&w.value)
        && let Some(e) = crate::valid::generic_error(n.sig)
    {
        let (value, f) = (&w.value, local("__backoff_when_fn", w.span));
        typed = quote_spanned! {w.span=> {
            let #f: fn(&#e) -> _ = #value;
            #f
        }};
    }
    let when_l = user("__backoff_when", w.span);
    let (p, error, lt) = (p_at(w.span), local("__backoff_error", w.span), lt_at(w.key));
    let error = if given {
        quote!(#error)
    } else {
        quote_spanned! {w.span=> #lt _ as #p::WhenParameter<_>>::pass(#error) }
    };
    let value = if is_closure(&w.value) {
        quote_spanned! {w.span=> {#when_l}(#error) }
    } else {
        quote_spanned! {w.span=>
            <_ as #p::WhenFn<_, _>>::call(&mut {#typed}, #error)
        }
    };
    // With `on(..)`, `when` returns the user's own type, matched against
    // the arms' patterns; else a `bool` or a `Decision`.
    let call = if n.args.on.is_empty() {
        quote_spanned!(w.span=> #p::IntoDecision::into_decision(#value))
    } else {
        super::kinds::classify(n.args, &p, value, w.span)
    };
    bound(&w.value, &when_l, &typed, &call)
}

// Input:  `when = W` of a plain fn whose loop the runtime runs.
// Output: |error| { let mut when = W; IntoDecision::into_decision(WhenFn::call(&mut when, pass(error))) },
//         the verdict as a closure of the error, checked as `decision` is.
pub(super) fn verdict_closure(n: &Names<'_>, at: proc_macro2::Span) -> TokenStream {
    let (error, decision) = (local("__backoff_error", at), decision(n));
    quote!(|#error| #decision,)
}

/// Whether `when`'s value borrows nothing of the function's: it names
/// neither `self` nor any parameter (a path to a function, `Self::f`, or a
/// closure of its own parameters), so it can be given to the runtime's loop
/// beside the attempts, which borrow what the body uses. A value that names
/// one keeps the loop of the function's own, where it is evaluated at each
/// verdict and borrows only then.
pub(super) fn borrows_nothing(value: &Expr, sig: &syn::Signature) -> bool {
    let mut names: Vec<String> = vec!["self".to_owned()];
    for input in &sig.inputs {
        if let syn::FnArg::Typed(typed) = input {
            collect_idents(typed.pat.to_token_stream(), &mut |i| {
                names.push(i.to_string())
            });
        }
    }
    // (Each identifier made a string once, not once per name.)
    let mut borrows = false;
    collect_idents(value.to_token_stream(), &mut |i| {
        let i = i.to_string();
        borrows |= names.contains(&i);
    });
    !borrows
}

/// Calls `f` on every identifier in `tokens`, in groups too.
fn collect_idents(tokens: TokenStream, f: &mut impl FnMut(&Ident)) {
    for tree in tokens {
        match tree {
            proc_macro2::TokenTree::Ident(i) => f(&i),
            proc_macro2::TokenTree::Group(g) => collect_idents(g.stream(), f),
            _ => {}
        }
    }
}

// Input:  `when_ok = W`; `__backoff_value` is the `Ok` value, a `&T`.
// Output: WhenOkReturn::decision(WhenOkFn::call(&mut {W}, pass(value)))
//         (for a closure `{ let when_ok = W; WhenOkReturn::decision({when_ok}(pass(value))) }`)
pub(super) fn decide_ok(n: &Names<'_>, w: &Arg<Expr>) -> TokenStream {
    let (typed, given) = typed(&w.value, || [n.ok_ty()]);
    let when_ok_l = user("__backoff_when_ok", w.span);
    let (p, lt, value) = (p_at(w.span), lt_at(w.key), local("__backoff_value", w.span));
    let value = if given {
        quote!(#value)
    } else {
        quote_spanned! {w.span=> #lt _ as #p::WhenOkParameter<_>>::pass(#value) }
    };
    let call = if is_closure(&w.value) {
        quote_spanned! {w.span=>
            <_ as #p::WhenOkReturn>::decision({#when_ok_l}(#value))
        }
    } else {
        quote_spanned! {w.span=>
            <_ as #p::WhenOkReturn>::decision(<_ as #p::WhenOkFn<_, _>>::call(&mut {#typed}, #value))
        }
    };
    bound(&w.value, &when_ok_l, &typed, &call)
}

// Input:  `on_retry = O`; `__backoff_outcome` (a `&E`, or with `when_ok`
//         a `&Result<T, E>`) and `__backoff_event`.
// Output: OnRetryFn::call(&mut {O}, pass(error), pass(event));
//         (for a closure `{ let on_retry = O; OnRetryReturn::done({on_retry}(pass(error), pass(event))); }`)
pub(super) fn call_on_retry(n: &Names<'_>) -> Option<TokenStream> {
    let (args, p) = (n.args, &n.p);
    let o = args.on_retry.as_ref()?;
    let (typed, given) = typed(&o.value, || {
        let first_ty = if args.when_ok.is_some() {
            n.outcome_ty()
        } else {
            n.error_ty()
        };
        [first_ty, quote!(&#p::RetryEvent)]
    });
    let on_retry_l = user("__backoff_on_retry", o.span);
    let [outcome, event] = ["__backoff_outcome", "__backoff_event"].map(|name| local(name, o.span));
    let (p, lt) = (p_at(o.span), lt_at(o.key));
    let (first, event) = if given {
        (quote!(#outcome), quote!(#event))
    } else {
        let event = quote_spanned! {o.span=>
            #lt _ as #p::OnRetryEventParameter<_>>::pass(#event)
        };
        let first = if args.when_ok.is_some() {
            quote_spanned! {o.span=>
                #lt _ as #p::OnRetryOutcomeParameter<_, _>>::pass(#outcome)
            }
        } else {
            // Without `when_ok`, only errors are retried: `__backoff_error`
            // is the error, `&E`.
            quote_spanned! {o.span=>
                #lt _ as #p::OnRetryParameter<_>>::pass(#outcome)
            }
        };
        (first, event)
    };
    let call = if is_closure(&o.value) {
        quote_spanned! {o.span=>
            <_ as #p::OnRetryReturn>::done({#on_retry_l}(#first, #event));
        }
    } else {
        quote_spanned! {o.span=>
            <_ as #p::OnRetryReturn>::done(<_ as #p::OnRetryFn<_, _, _>>::call(
                &mut {#typed},
                #first,
                #event,
            ));
        }
    };
    // (A statement: in braces for a path too.)
    let call = if is_closure(&o.value) {
        call
    } else {
        quote!({ #call })
    };
    Some(bound(&o.value, &on_retry_l, &typed, &call))
}

// Input:  `on_giveup = G`, `fallback = F`; `__backoff_result` and
//         `__backoff_report`.
// Output: { let hook = G; OnGiveUpFn::call(hook, pass(&result), pass(&report)); }
//         let result = match result {
//             Err(error) => { let hook = F; FallbackFn::call(hook, error, &report) }
//             ok => ok,
//         };
//
// Each an `FnOnce`, evaluated on whichever path gives up, just before it
// returns: it may move a by-value argument the body does not move.
// `on_giveup` sees the outcome the call gave up with; `fallback` then
// replaces an error (never an `Ok`, not even one `when_ok` rejected).
pub(super) fn call_on_giveup(n: &Names<'_>) -> Option<TokenStream> {
    let on_giveup = n.args.on_giveup.as_ref().map(|g| {
        let p = &n.p;
        let giveup_ty = quote!(&#p::GiveUp);
        let (typed, given) = typed(&g.value, || [n.outcome_ty(), giveup_ty]);
        let [result, report, hook] = ["__backoff_result", "__backoff_report", "__backoff_hook"]
            .map(|name| local(name, g.span));
        let (p, lt) = (p_at(g.span), lt_at(g.key));
        let call = if given {
            quote_spanned! {g.span=>
                <_ as #p::OnGiveUpReturn>::done({#hook}(&#result, &#report));
            }
        } else {
            let (outcome, record) = (
                quote_spanned! {g.span=> #lt _ as #p::OnGiveUpParameter<_, _>>::pass(&#result) },
                quote_spanned! {g.span=> #lt _ as #p::OnGiveUpRecordParameter<_>>::pass(&#report) },
            );
            quote_spanned! {g.span=>
                <_ as #p::OnGiveUpReturn>::done(<_ as #p::OnGiveUpFn<_, _, _>>::call(
                    #hook,
                    #outcome,
                    #record,
                ));
            }
        };
        quote! {
            let #hook = #typed;
            #call
        }
    });
    let fallback = n.args.fallback.as_ref().map(|f| {
        let p = &n.p;
        let (ok_of, error_of) = (n.ok_of(), n.error_of());
        let giveup_ty = quote!(&#p::GiveUp);
        let typed = typed_closure(&f.value, || [error_of.clone(), giveup_ty]);
        let [result, report, hook, error] = [
            "__backoff_result",
            "__backoff_report",
            "__backoff_hook",
            "__backoff_error",
        ]
        .map(|name| local(name, f.span));
        let pf = p_at(f.span);
        let call = quote_spanned! {f.span=>
            <_ as #pf::FallbackFn<#ok_of, #error_of>>::call(#hook, #error, &#report)
        };
        quote! {
            let #result = match #result {
                #p::Err(#error) => {
                    let #hook = #typed;
                    #call
                }
                __backoff_ok => __backoff_ok,
            };
        }
    });
    if on_giveup.is_none() && fallback.is_none() {
        return None;
    }
    Some(quote! {
        #on_giveup
        #fallback
    })
}

// Input:  `on_success = S`; `told`, an `Option<(&T, SuccessEvent)>`: the
//         loop's `call.success(&ended)`, or what a hedged call told.
// Output: if let Some((value, event)) = told {
//             let hook = S; let () = {hook}(value, &event);
//         }
//         `S` a closure given the parameter types `&T` and `&SuccessEvent`
//         its user left out.
//
// Called once, after the loop, when the call ended with an `Ok` it
// accepted (never on a give-up, nor for `fallback`'s value), by the
// expansion: a hook of the wrong type is rustc's error at it.
pub(super) fn call_on_success(n: &Names<'_>, told: TokenStream) -> Option<TokenStream> {
    let s = n.args.on_success.as_ref()?;
    let p = p_at(s.span);
    let typed = typed_closure(&s.value, || [n.ok_ty(), quote!(&#p::SuccessEvent)]);
    let [value, event, hook] =
        ["__backoff_value", "__backoff_event", "__backoff_hook"].map(|name| local(name, s.span));
    let call = quote_spanned! {s.span=> {#hook}(#value, &#event) };
    Some(quote! {
        if let ::core::option::Option::Some((#value, #event)) = #told {
            let #hook = #typed;
            let () = #call;
        }
    })
}

/// Whether a hook is written as a closure.
fn is_closure(expr: &Expr) -> bool {
    matches!(crate::attr::ungrouped(expr), Expr::Closure(_))
}

// Input:  a hook's value, the local it is bound to, its typed value, its call.
// Output: { let local = closure; call }, or for a path the call alone,
//         which takes `&mut {path}`.
//
// `when`, `when_ok` and `on_retry` closures are called directly,
// `{local}(..)`: the attribute has checked their arity, and a closure that
// moves what it captures is then rustc's own error naming that capture
// ("value moved into closure here, in previous iteration of loop"), as in
// a loop written by hand. The call moves the closure into a temporary,
// which an `FnMut` may be called as: its binding needs no `mut`, which an
// `Fn` would not use. A path is called through the hook's trait, which
// reports a function of the wrong arity in the argument's terms, on a
// temporary of its own (`&mut {path}`, evaluated as a binding would be).
// (`on_giveup`, called once, takes any closure through its trait.)
fn bound(value: &Expr, local: &Ident, typed: &TokenStream, call: &TokenStream) -> TokenStream {
    if is_closure(value) {
        quote! {{
            let #local = #typed;
            #call
        }}
    } else {
        call.clone()
    }
}
