//! `attempt_timeout` (each attempt under a timer) and `timeout` (the whole
//! call under one), `async fn` only.

use proc_macro2::{Group, TokenStream};
use quote::{quote, quote_spanned};

use super::names::{Names, local, p_at};
use super::policy::duration;
use crate::attr::{Arg, DurationArg};

// Input:  `attempt_timeout = D`, and the body's block of an `async fn`.
// Output: match timeout(D, attempt::<R, _>(async { body })).await {
//             Ok(outcome) => outcome,
//             Err(elapsed) => from_result(Err(E::from(elapsed))),
//         }
pub(super) fn attempt_timeout(n: &Names<'_>, t: &Arg<DurationArg>, body: &Group) -> TokenStream {
    let (p, ret, from_result) = (&n.p, &n.ret, &n.rebuild_fn());
    let mut d = duration(p, t.value.value);
    // Cut to the time left, when the call may have a deadline (a hedged
    // call's: its `timeout`, the attempt told of it in its context).
    if n.args.hedge.is_some() {
        if n.args.timeout.is_some() {
            d = quote!(#p::cut(#d, __backoff_context));
        }
    } else if n.args.timeout.is_some() || n.args.max_elapsed.is_some() || n.args.policy.is_some() {
        let context = context(n);
        d = quote!(__backoff_call.attempt_timeout(#d, #context));
    }
    // Beside `timeout`, the conversion is checked at `timeout`'s name too:
    // a missing `From<Elapsed>` is one error, not one per argument.
    let at = n.args.timeout.as_ref().map_or(t.key, |call| call.key);
    let (elapsed, pt) = (local("__backoff_elapsed", at), p_at(at));
    // (At the return type: one error there for a non-`Result` fn.)
    let error = n.error_of();
    let from = quote_spanned! {at=>
        <#error as #pt::FromElapsed>::from_elapsed(#elapsed)
    };
    let pk = p_at(t.key);
    let timeout = quote_spanned! {t.key=>
        <#pk::DefaultSleep as #pk::AsyncTimeout>::timeout(#d, #p::attempt::<#ret, _>(async #body))
    };
    quote! {
        match #timeout.await {
            #p::Ok(__backoff_outcome) => __backoff_outcome,
            #p::Err(__backoff_elapsed) => {
                #from_result(#p::Err(#from))
            }
        }
    }
}

// Input:  `timeout = D` in an `async fn`, or none.
// Output: call.context_within(D), or call.context(): the context of the
//         attempt about to run, its time left counted to the nearer of
//         `timeout`'s end and `max_elapsed`'s.
pub(super) fn context(n: &Names<'_>) -> TokenStream {
    match n.args.timeout.as_ref().filter(|_| n.is_async) {
        Some(t) => {
            let d = duration(&n.p, t.value.value);
            quote!(__backoff_call.context_within(#d))
        }
        None => quote!(__backoff_call.context()),
    }
}

// Input:  `timeout = D` in an `async fn`, or none; `on_retry`'s event in
//         `__backoff_event`.
// Output: let __backoff_event = &within(__backoff_event, D);
//         its time left counted to the nearer deadline too.
pub(super) fn event_within(n: &Names<'_>) -> Option<TokenStream> {
    let t = n.args.timeout.as_ref().filter(|_| n.is_async)?;
    let (p, d) = (&n.p, duration(&n.p, t.value.value));
    Some(quote!(let __backoff_event = &#p::within(__backoff_event, #d);))
}

// Input:  the loop, and `timeout = D` in an `async fn`.
// Output: let mut calls = 0;
//         match timeout(D, async { loop }).await {
//             Ok(ended) => ended,
//             Err(elapsed) => {
//                 let result = Err(E::from(elapsed));
//                 call.timed_out(calls, tracer!(..), result)
//             }
//         }
//         or the loop unchanged: either gives the call's `Ended`.
//
// The whole loop, sleeps and the attempt in flight included, under one
// timer; when it fires, the call ends with `E::from(Elapsed)`, through the
// driver's give-up step.
pub(super) fn call_timeout(n: &Names<'_>, retry_loop: TokenStream) -> TokenStream {
    let t = match (&n.args.timeout, n.is_async) {
        (Some(t), true) => t,
        _ => return retry_loop,
    };
    let p = &n.p;
    let tracer = n.tracer("result", "__backoff_result");
    let d = duration(p, t.value.value);
    let (elapsed, pt) = (local("__backoff_elapsed", t.key), p_at(t.key));
    // (At the return type: one error there for a non-`Result` fn.)
    let error = n.error_of();
    let from = quote_spanned! {t.key=>
        <#error as #pt::FromElapsed>::from_elapsed(#elapsed)
    };
    let pk = p_at(t.key);
    let timeout = quote_spanned! {t.key=>
        <#pk::DefaultSleep as #pk::AsyncTimeout>::timeout(#d, async { #retry_loop })
    };
    quote! {{
        let mut __backoff_calls: u32 = 0;
        match #timeout.await {
            #p::Ok(__backoff_ended) => __backoff_ended,
            #p::Err(__backoff_elapsed) => {
                let __backoff_result = #p::Err(#from);
                __backoff_call.timed_out(__backoff_calls, #tracer, __backoff_result)
            }
        }
    }}
}
