//! `cancel = TOKEN`: the token is asked before the first attempt, a
//! retry's outcome is kept across the sleep, and the sleep waits on the
//! token (a plain fn, `Cancel::wait_timeout`) or races it (an `async fn`,
//! `Cancel::cancelled`); a cancel gives up through the driver with the
//! kept outcome. The value is evaluated at each use, as a hook is, and
//! each use is a call of the trait's own method at the value, so a value
//! that is not a token is one error there, in the trait's words.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Expr;

use super::hooks;
use super::names::{Names, local, p_at};
use crate::attr::Arg;

/// `<_ as AsCancel>::METHOD(&(TOKEN) ARGS)`, at the token.
fn ask(c: &Arg<Expr>, method: &str, args: TokenStream) -> TokenStream {
    let (pc, expr) = (p_at(c.span), &c.value);
    let method = syn::Ident::new(method, c.span);
    quote_spanned! {c.span=> <_ as #pc::AsCancel>::#method(&(#expr) #args) }
}

// Input:  `cancel = TOKEN`, and the loop's end (the call's `Ended`).
// Output: if AsCancel::is_cancelled(&(TOKEN)) {
//             let result = Err(E::from(Cancelled));
//             call.cancelled(tracer!(..), result)      // no attempt runs
//         } else { ENDED }
pub(super) fn before_first_attempt(n: &Names<'_>, ended: TokenStream) -> TokenStream {
    let Some(c) = &n.args.cancel else {
        return ended;
    };
    let (p, pk) = (&n.p, p_at(c.key));
    let tracer = n.tracer("result", "__backoff_result");
    let error = n.error_of();
    let from = quote_spanned! {c.key=>
        <#error as #pk::FromCancelled>::from_cancelled(#p::Cancelled)
    };
    let is_cancelled = ask(c, "is_cancelled", TokenStream::new());
    quote! {
        if #is_cancelled {
            let __backoff_result = #p::Err(#from);
            __backoff_call.cancelled(#tracer, __backoff_result)
        } else {
            #ended
        }
    }
}

// Input:  the outcome in `__backoff_outcome`, `value` (its split: the
//         error, or with `when_ok` the whole result), `decision`, `function`.
// Output: let (delay, kept) = {
//             let outcome = VALUE;
//             let decision = DECISION;                 // on the error
//             let outcome = Err(outcome);              // (without `when_ok`)
//             match call.after_kept(function, tracer!(..), decision, outcome, on_retry) {
//                 Continue(kept) => kept,              // the outcome, kept for a cancel
//                 Break(ended) => break ended,
//             }
//         };
pub(super) fn after_attempt(
    n: &Names<'_>,
    value: TokenStream,
    decision: TokenStream,
    function: TokenStream,
) -> TokenStream {
    let p = &n.p;
    let tracer = n.tracer("result", "__backoff_outcome");
    let on_retry = match (hooks::call_on_retry(n), &n.args.when_ok) {
        (None, _) => quote!(#p::NoHook),
        (Some(call), Some(_)) => {
            quote!(#p::on_retry_once(|__backoff_outcome, __backoff_event| #call))
        }
        (Some(call), None) => quote! {
            #p::on_retry_once(|__backoff_kept, __backoff_event| {
                if let #p::Err(__backoff_outcome) = __backoff_kept {
                    #call
                }
            })
        },
    };
    let wrap = n
        .args
        .when_ok
        .is_none()
        .then(|| quote!(let __backoff_outcome = #p::Err(__backoff_outcome);));
    quote! {
        let (__backoff_delay, __backoff_kept) = {
            let __backoff_outcome = #value;
            let __backoff_decision = #decision;
            #wrap
            match __backoff_call.after_kept(#function, #tracer, __backoff_decision, __backoff_outcome, #on_retry) {
                #p::ControlFlow::Continue(__backoff_kept) => __backoff_kept,
                #p::ControlFlow::Break(__backoff_ended) => break __backoff_ended,
            }
        };
    }
}

// Input:  `cancel = TOKEN`, `__backoff_delay` and `__backoff_kept`; the
//         async sleep's future (the default, or `sleep`'s).
// Output: let cancelled = if sleeps(delay) {
//             AsCancel::wait_timeout(&(TOKEN), delay)               // a plain fn
//             race(AsCancel::cancelled(&(TOKEN)), SLEEP).await      // an `async fn`
//         } else { AsCancel::is_cancelled(&(TOKEN)) };
//         if cancelled {
//             let result = kept;
//             break call.cancelled(tracer!(..), result);
//         }                                  // (else `kept` is dropped with the iteration)
pub(super) fn sleep(n: &Names<'_>, c: &Arg<Expr>, sleeping: Option<TokenStream>) -> TokenStream {
    let p = &n.p;
    let delay = local("__backoff_delay", c.span);
    let wait = match sleeping {
        None => ask(c, "wait_timeout", quote!(, #delay)),
        Some(sleeping) => {
            let (cancelled, pc) = (ask(c, "cancelled", TokenStream::new()), p_at(c.span));
            quote_spanned!(c.span=> #pc::race(#cancelled, #sleeping).await)
        }
    };
    let is_cancelled = ask(c, "is_cancelled", TokenStream::new());
    let tracer = n.tracer("result", "__backoff_result");
    quote! {
        let __backoff_cancelled = if #p::sleeps(__backoff_delay) { #wait } else { #is_cancelled };
        if __backoff_cancelled {
            let __backoff_result = __backoff_kept;
            break __backoff_call.cancelled(#tracer, __backoff_result);
        }
    }
}

// Input:  the hedged call's operation (a closure of the context, if
//         `with_context`), and `cancel = TOKEN`.
// Output: OP, or `WithContext(OP)` for a closure of the context, and
//         beside `cancel` that in `Cancellable(.., &|| AsCancel::is_cancelled(&(TOKEN)))`:
//         the hedged call starts no attempt once it is cancelled.
pub(super) fn hedged_call(n: &Names<'_>, with_context: bool, op: TokenStream) -> TokenStream {
    let p = &n.p;
    let op = match with_context {
        true => quote!(#p::WithContext(#op)),
        false => op,
    };
    let Some(c) = &n.args.cancel else {
        return op;
    };
    let is_cancelled = ask(c, "is_cancelled", TokenStream::new());
    quote!(#p::Cancellable(#op, &|| #is_cancelled))
}

// Input:  `cancel = TOKEN` beside `hedge`, the hedged call's outcome
//         expression, and whether the give-up hooks keep a report.
// Output: if AsCancel::is_cancelled(&(TOKEN)) {
//             gave_up = Some(GiveUp::new(0, ZERO, Cancelled));      // with `on_giveup`/`fallback`
//             from_result(Err(E::from(Cancelled)))
//         } else { OUTCOME }
pub(super) fn before_hedged(n: &Names<'_>, outcome: TokenStream, gives_up: bool) -> TokenStream {
    let Some(c) = &n.args.cancel else {
        return outcome;
    };
    let (p, pk, from_result) = (&n.p, p_at(c.key), n.rebuild_fn());
    let error = n.error_of();
    let from = quote_spanned! {c.key=>
        <#error as #pk::FromCancelled>::from_cancelled(#p::Cancelled)
    };
    let report = gives_up.then(|| {
        quote! {
            __backoff_gave_up = ::core::option::Option::Some(
                #p::GiveUp::new(0, #p::Duration::ZERO, #p::GiveUpReason::Cancelled),
            );
        }
    });
    let is_cancelled = ask(c, "is_cancelled", TokenStream::new());
    quote! {
        if #is_cancelled {
            #report
            #from_result(#p::Err(#from))
        } else {
            #outcome
        }
    }
}

/// `cancel` beside `sleep` in a plain fn: the fn waits on the token
/// between attempts, so a blocking `sleep` would have no part to play.
pub(super) fn check(
    args: &crate::attr::RetryArgs,
    is_async: bool,
    errors: &mut crate::errors::Errors,
) {
    if let (Some(_), Some(sleep), false) = (&args.cancel, &args.sleep, is_async) {
        errors.push(syn::Error::new(
            sleep.key,
            "a plain fn with `cancel` waits on the token between attempts, not in `sleep`; remove `sleep` (an `async fn`'s `sleep` is raced against the token)",
        ));
    }
}
