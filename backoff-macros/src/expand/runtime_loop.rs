//! The loop of a plain fn that names only its policy: one closure of
//! attempts, run by the runtime's out-of-line loop.

use proc_macro2::{Group, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

/// What the loop of a plain fn that names only its policy is made of.
pub(super) struct RuntimeLoopParts<'a> {
    /// The function's name, for `tracing`.
    pub(super) name: String,
    /// The body's type.
    pub(super) ret: &'a Type,
    /// The body, in its braces.
    pub(super) body: Group,
    /// The `||` of the attempts' closure, at the body's brace.
    pub(super) bars: TokenStream,
    /// The runtime's loop, a method of `RetryResult`: `retry_blocking`, or
    /// `retry_blocking_when` with a `when`.
    pub(super) run: TokenStream,
    /// Its arguments before the trace: the start (`origin::<P>()` for a
    /// policy the type `P` holds, else `&start`) and the metrics' name of
    /// the call.
    pub(super) start: TokenStream,
    /// `when`'s verdict as a closure of the error, for `retry_blocking_when`.
    pub(super) when: Option<TokenStream>,
}

// Input:  the parts of a plain fn's loop, when the attribute names only
//         its policy.
// Output: fn fn_mut<R, F: FnMut() -> R>(f: F) -> F { f }
//         let attempts = fn_mut(#[inline(always)] || { attempt_sync::<R, _>(|| { body }) });
//         RetryResult::retry_blocking(origin::<P>(),
//             concat!(module_path!(), "::name"), tracer!(name, &attempts), attempts)
//         or, with a `when` that borrows nothing of the function's,
//         RetryResult::retry_blocking_when(origin::<P>(),
//             .., tracer!(..), |error| { let mut when = W; into_decision(WhenFn::call(&mut when, pass(error))) }, attempts)
//
//         The runtime runs the first attempt inline and, if it fails, the
//         rest of the loop out of line: a call that succeeds at once pays
//         for its test of the outcome, not for the loop's registers and
//         state. The attempts are one `FnMut` closure, made one by a
//         function of the expansion's own (whose bound rustc names when the
//         body moves a captured argument, E0507, rather than one of the
//         runtime's). The body is an `FnOnce` inside it: a body that moves
//         a captured argument moves it once, into that closure, so the
//         mistake is one error however many places the body moves it (the
//         body as the `FnMut` itself would be an error at each). The loop
//         is a method of `RetryResult`, called at the return type: a return
//         type that is not a `Result` is reported there, once, as the
//         trait's own requirement.
pub(super) fn runtime_loop(p: &Ident, parts: &RuntimeLoopParts<'_>) -> TokenStream {
    let RuntimeLoopParts {
        name,
        ret,
        body,
        bars,
        run,
        start,
        when,
    } = parts;
    let ret_span = ret.span();
    let pr = Ident::new("__backoff_private", ret_span);
    // (At the return type, as the loop's call is: a return type that is
    // not a `Result` is reported there, once, not a second time here.)
    let fn_mut = quote_spanned!(ret_span=> __backoff_fn_mut);
    let attempts = Ident::new("__backoff_attempts", Span::call_site().located_at(ret_span));
    // (In the body's braces, the inner call at the return type: a borrow
    // of a captured argument that escapes is reported there.)
    let mut outer = Group::new(
        proc_macro2::Delimiter::Brace,
        quote_spanned!(ret_span=> #pr::attempt_sync::<#ret, _>(#[inline(always)] #bars #body)),
    );
    outer.set_span(body.span());
    let looped = quote_spanned! {ret_span=>
        #pr::RetryResult::#run(#start #p::tracer!(#name, &#attempts), #when #attempts)
    };
    quote! {
        fn __backoff_fn_mut<R, F: ::core::ops::FnMut() -> R>(f: F) -> F {
            f
        }
        // (The attempts are the function's body: `clippy::result_large_err`
        // is the function's to report, not the closures' too. Inlined
        // always: into the first attempt and into the loop's one call, and
        // never optimized a third time on their own.)
        #[allow(clippy::result_large_err)]
        let #attempts = #fn_mut(#[inline(always)] #bars #outer);
        #looped
    }
}
