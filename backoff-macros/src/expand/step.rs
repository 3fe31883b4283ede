//! The function's own loop after each attempt: one call into the runtime's
//! driver with the outcome and the hooks, and what the loop does with its
//! answer (sleep, or return). Also the refusals before an attempt (a
//! breaker, a throttle), which give up through the driver's give-up step.
//! The rule itself (verdict, step, `on_retry`, report, trace, metrics) is
//! the runtime's; nothing here decides.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::{Expr, Ident};

use super::hooks;
use super::names::{Names, local, p_at};
use crate::attr::Arg;

// Input:  `on_giveup = G`, `fallback = F`.
// Output: finish(|result, report| { G(&result, &report); let result = match result { Err(e) => F(e, &report), ok => ok }; result })
//         or result(): how the loop's `Ended` becomes the call's result,
//         once, after the loop (and after `timeout`'s future, which then
//         never holds a hook that may move an argument).
pub(super) fn finish(n: &Names<'_>) -> TokenStream {
    match hooks::call_on_giveup(n) {
        Some(calls) => quote! {
            finish(|__backoff_result, __backoff_report| {
                #calls
                __backoff_result
            })
        },
        None => quote!(result()),
    }
}

// Input:  the hooks, the outcome in `__backoff_outcome`.
// Output: let delay = {
//             let error = match into_result(outcome) {
//                 Ok(v) => { call.accepted(function); break Ended::Done(Ok(v)) }
//                 Err(error) => error,
//             };
//             match call.after_error(function, tracer!(..), when(&error), error) {
//                 Continue(delay) => delay,      // the error was dropped in there
//                 Break(ended) => break ended,
//             }
//         };
//         or, with `on_retry`, `after_error_hooked(.., error, |error, event| on_retry(error, event))`;
//         or, with `when_ok`, on the whole outcome:
//             let result = into_result(outcome);
//             match call.after(function, tracer!(..), match &result { Ok(value) => when_ok(value), Err(error) => when(error) },
//                              result) { .. }      // or `after_hooked(.., |outcome, event| on_retry(outcome, event))`
//         (`when` is `Decision::Retry` without a `when`.)
//
// `when` and `when_ok` are built and called here, where a loop written by
// hand calls them; `on_retry` is a closure built at the call, so a borrow
// of `self` or of an argument it makes ends with the call. The driver
// decides the rest.
pub(super) fn after_attempt(n: &Names<'_>) -> TokenStream {
    let (p, split, value) = (&n.p, n.split(), &n.value);
    let within = super::timeouts::event_within(n);
    let on_retry = hooks::call_on_retry(n).map(|call| match within {
        Some(within) => quote!(, |__backoff_outcome, __backoff_event| { #within #call }),
        None => quote!(, |__backoff_outcome, __backoff_event| #call),
    });
    let when = hooks::decision(n);
    // (A `Call` is told the function's name at each step: its compact
    // form does not keep it.)
    let function = n.function();
    let (value, outcome, decision, after) = match &n.args.when_ok {
        None => (
            quote! {
                match #split {
                    #p::Ok(__backoff_value) => {
                        __backoff_call.accepted(#function);
                        break #p::Ended::Done(#p::Ok(#value));
                    }
                    #p::Err(__backoff_error) => __backoff_error,
                }
            },
            quote!(error),
            match n.args.when {
                Some(_) => quote!({ let __backoff_error = &__backoff_outcome; #when }),
                None => quote!(#p::RETRY),
            },
            "after_error",
        ),
        Some(w) => {
            let when_ok = hooks::decide_ok(n, w);
            (
                split,
                quote!(result),
                quote! {
                    match &__backoff_outcome {
                        #p::Ok(__backoff_value) => #when_ok,
                        #p::Err(__backoff_error) => #when,
                    }
                },
                "after",
            )
        }
    };
    let tracer = n.tracer(&outcome.to_string(), "__backoff_outcome");
    let hooked = if on_retry.is_some() { "_hooked" } else { "" };
    let after = syn::Ident::new(&format!("{after}{hooked}"), proc_macro2::Span::call_site());
    quote! {
        let __backoff_delay = {
            let __backoff_outcome = #value;
            match __backoff_call.#after(#function, #tracer, #decision, __backoff_outcome #on_retry) {
                #p::ControlFlow::Continue(__backoff_delay) => __backoff_delay,
                #p::ControlFlow::Break(__backoff_ended) => break __backoff_ended,
            }
        };
    }
}

// Input:  `circuit`, `throttle`.
// Output: if let Err(refused) = call.admit() {
//             let result = Err(E::from(refused));
//             break call.refused(tracer!(..), result);
//         }
//         (the same with `ask_throttle` and `E::from(Rejected)`)
//
// A refused call fails fast with `E::from(CircuitOpen)`, a rejected one
// with `E::from(Rejected)`, through the driver's give-up step.
pub(super) fn refusals(n: &Names<'_>) -> Option<TokenStream> {
    if !n.args.gates_attempts() {
        return None;
    }
    let p = &n.p;
    let tracer = n.tracer("result", "__backoff_result");
    let refuse = |arg: &Option<Arg<Expr>>, ask: &str, trait_: &str, conv: &str| {
        let a = arg.as_ref()?;
        // On the argument's name: the mistake is the error type, not the
        // breaker or the throttle.
        let (refused, pc) = (local("__backoff_refused", a.key), p_at(a.key));
        let (ask, trait_, conv) = (
            Ident::new(ask, proc_macro2::Span::call_site()),
            Ident::new(trait_, a.key),
            Ident::new(conv, a.key),
        );
        // (`ErrorOf<R>` at the return type: a function that does not
        // return `Result` is one error there, not a second one here.)
        let error = n.error_of();
        let from = quote_spanned! {a.key=>
            <#error as #pc::#trait_>::#conv(#refused)
        };
        Some(quote! {
            if let #p::Err(__backoff_refused) = __backoff_call.#ask() {
                let __backoff_result = #p::Err(#from);
                break __backoff_call.refused(#tracer, __backoff_result);
            }
        })
    };
    let circuit = refuse(
        &n.args.circuit,
        "admit",
        "FromCircuitOpen",
        "from_circuit_open",
    );
    let throttle = refuse(
        &n.args.throttle,
        "ask_throttle",
        "FromRejected",
        "from_rejected",
    );
    Some(quote! {
        #circuit
        #throttle
    })
}
