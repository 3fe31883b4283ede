//! `attempt_timeout` (each attempt under a timer) and `timeout` (the whole
//! call under one), `async fn` only.

use proc_macro2::{Group, TokenStream};
use quote::{quote, quote_spanned};

use super::hooks::{GiveUpCalls, report_give_up};
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
    let d = duration(p, t.value.value);
    // Beside `timeout`, the conversion is checked at `timeout`'s name too:
    // a missing `From<Elapsed>` is one error, not one per argument.
    let at = n.args.timeout.as_ref().map_or(t.key, |call| call.key);
    let (elapsed, pt) = (local("__backoff_elapsed", at), p_at(at));
    let from = quote_spanned! {at=>
        <#pt::ErrorOf<#ret> as #pt::FromElapsed>::from_elapsed(#elapsed)
    };
    let pk = p_at(t.key);
    let timeout = quote_spanned! {t.key=>
        <#pk::DefaultSleep as #pk::AsyncTimeout>::timeout(#d, #p::attempt::<#ret, _>(async #body))
    };
    quote! {
        match #timeout.await {
            #p::Result::Ok(__backoff_outcome) => __backoff_outcome,
            #p::Result::Err(__backoff_elapsed) => {
                #from_result(#p::Result::Err(#from))
            }
        }
    }
}

// Input:  the loop, and `timeout = D` in an `async fn`.
// Output: let mut calls = 0;
//         match timeout(D, attempt::<R, _>(async { loop })).await {
//             Ok(outcome) => outcome,     // (with a deferred `on_giveup`, called here if the loop gave up)
//             Err(elapsed) => {
//                 let result = Err(E::from(elapsed)); let report = timed_out(..);
//                 recording.gave_up(None, report.reason);   // `timeout`
//                 report_give_up(report); from_result(result)
//             }
//         }
//         or the loop unchanged.
//
// The whole loop, sleeps and the attempt in flight included, under one
// timer; when it fires, the call ends with `E::from(Elapsed)`.
pub(super) fn call_timeout(
    n: &Names<'_>,
    retry_loop: TokenStream,
    giveup: &GiveUpCalls,
) -> TokenStream {
    let t = match (&n.args.timeout, n.is_async) {
        (Some(t), true) => t,
        _ => return retry_loop,
    };
    let (p, ret, split, from_result) = (&n.p, &n.ret, &n.split(), &n.rebuild_fn());
    let (clock, started_value) = (&n.clock, &n.started_value);
    let call_on_giveup = &giveup.now;
    let record_refused = n.record_refused();
    let timed_out_give_up = report_give_up(n, call_on_giveup.as_ref());
    let d = duration(p, t.value.value);
    let (elapsed, pt) = (local("__backoff_elapsed", t.key), p_at(t.key));
    let from = quote_spanned! {t.key=>
        <#pt::ErrorOf<#ret> as #pt::FromElapsed>::from_elapsed(#elapsed)
    };
    let pk = p_at(t.key);
    let timeout = quote_spanned! {t.key=>
        <#pk::DefaultSleep as #pk::AsyncTimeout>::timeout(#d, #p::attempt::<#ret, _>(async { #retry_loop }))
    };
    let (gave_up, finished) = if giveup.deferred {
        (
            quote! {
                let mut __backoff_gave_up: ::core::option::Option<#p::GiveUp> =
                    ::core::option::Option::None;
            },
            quote! {
                match __backoff_gave_up {
                    ::core::option::Option::None => __backoff_outcome,
                    ::core::option::Option::Some(__backoff_report) => {
                        let __backoff_result = #split;
                        #call_on_giveup
                        #from_result(__backoff_result)
                    }
                }
            },
        )
    } else {
        (TokenStream::new(), quote!(__backoff_outcome))
    };
    quote! {
        let mut __backoff_calls: u32 = 0;
        #gave_up
        match #timeout.await {
            #p::Result::Ok(__backoff_outcome) => #finished,
            #p::Result::Err(__backoff_elapsed) => {
                let __backoff_result = #p::Result::Err(#from);
                let __backoff_report = #p::timed_out(__backoff_calls, #clock, #started_value);
                // (The attempt in flight ended with no outcome.)
                #record_refused
                #timed_out_give_up
                #from_result(__backoff_result)
            }
        }
    }
}
