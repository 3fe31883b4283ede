//! The sleep between attempts: the default (`std::thread::sleep`, the
//! runtime's tokio sleep) or `sleep = PATH`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Expr;

use super::names::{Names, local, lt_at, p_at, user};
use crate::attr::Arg;

// Input:  `sleep = PATH`, if given.
// Output: let mut __backoff_sleep = PATH;
pub(super) fn sleep_binding(n: &Names<'_>) -> Option<TokenStream> {
    n.args.sleep.as_ref().map(|s| {
        let expr = &s.value;
        let sleep_l = user("__backoff_sleep", s.span);
        quote!(let mut #sleep_l = #expr;)
    })
}

// Input:  `sleep`, if given, and whether the function is `async`.
// Output: the statement sleeping `__backoff_delay`:
//         sleep_blocking(delay);  or  if sleeps(delay) { DefaultSleep::sleep(delay).await; }
//         or the user's, `SleepFn::call(&mut sleep, pass(delay))`, its result
//         checked (and awaited in an `async fn`).
pub(super) fn sleep(n: &Names<'_>) -> TokenStream {
    let (args, p) = (n.args, &n.p);
    // The default async sleep is the runtime's, whose poll is out of line:
    // it stays out of the function's own.
    let sleep_span = match (&args.sleep, n.sig.asyncness) {
        (Some(s), _) => s.span,
        (None, Some(a)) => a.span,
        (None, None) => Span::call_site(),
    };
    let (sleep_l, delay) = (
        user("__backoff_sleep", sleep_span),
        local("__backoff_delay", sleep_span),
    );
    // `sleep` is called with its argument, and its result checked, each
    // through a trait of its own (see `hooks::decision`).
    let sleep_call = |s: &Arg<Expr>| {
        let (p, lt) = (p_at(s.span), lt_at(s.key));
        let call = quote_spanned! {s.span=>
            <_ as #p::SleepFn<_, _>>::call(&mut #sleep_l, #lt _ as #p::SleepParameter>::pass(#delay))
        };
        (p, call)
    };
    if let Some(c) = args.cancel.as_ref().filter(|_| !n.is_async) {
        return super::cancel::sleep(n, c, None);
    }
    match (&args.sleep, n.is_async) {
        (Some(s), false) => {
            let (p, call) = sleep_call(s);
            quote_spanned! {s.span=>
                <_ as #p::BlockingSleepReturn>::done(#call);
            }
        }
        (Some(s), true) => {
            let (p, call) = sleep_call(s);
            if let Some(c) = &args.cancel {
                let sleeping =
                    quote_spanned!(s.span=> <_ as #p::AsyncSleepReturn<_>>::sleeping(#call));
                return super::cancel::sleep(n, c, Some(sleeping));
            }
            quote_spanned! {s.span=>
                <_ as #p::AsyncSleepReturn<_>>::sleeping(#call).await;
            }
        }
        (None, false) => quote!(#p::sleep_blocking(__backoff_delay);),
        (None, true) => {
            let ps = p_at(sleep_span);
            let sleeping = quote_spanned! {sleep_span=>
                <#ps::DefaultSleep as #ps::AsyncSleep>::sleep(#delay)
            };
            if let Some(c) = &args.cancel {
                return super::cancel::sleep(n, c, Some(sleeping));
            }
            quote! {
                // (Tested by value: a borrow of the delay would keep it in
                // the future across the sleep.)
                if #p::sleeps(__backoff_delay) {
                    #sleeping.await;
                }
            }
        }
    }
}
