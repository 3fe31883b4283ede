//! The loop's failure path: from a failed attempt to the next delay, or to
//! giving up.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

/// What the failure path of an `async fn` that keeps a `Carried`, or whose
/// only hook is `when`, is made of.
pub(super) struct CarriedParts<'a> {
    /// The `tracing` glue on `__backoff_result` (`Names::tracer`).
    pub(super) tracer: TokenStream,
    /// The runtime's step: `after_carried_recorded::<P, _, _>` (its
    /// `_decided` form with a `when`), or `after_decided_recorded` for a
    /// loop that keeps a `RetryState`.
    pub(super) step: TokenStream,
    /// Its arguments before the trace: `&mut slot, &recording,
    /// attempt_began, function,`, or `&mut slot, start, &mut recording,`.
    pub(super) args: TokenStream,
    /// Splits `__backoff_outcome` into a `Result`.
    pub(super) split: &'a TokenStream,
    /// `RetryResult::from_result(__backoff_result)`, at the return type.
    pub(super) returned: TokenStream,
    /// Sleeps `__backoff_delay`, awaited.
    pub(super) sleep: &'a TokenStream,
    /// `when`'s verdict on `__backoff_error` (a `&E`), if there is a `when`.
    pub(super) decision: Option<TokenStream>,
}

// Input:  the parts of the failure path of an `async fn` whose policy is a
//         type and that keeps nothing else; `__backoff_outcome` holds the
//         attempt's outcome.
// Output: let delay = {
//             let result = into_result(outcome);
//             match after_carried_recorded::<P, _, _>(&mut slot, &recording, attempt_began, function, tracer!(..), result) {
//                 Continue(delay) => delay,     // the error was dropped in there
//                 Break(result) => return from_result(result),
//             }
//         };
//         sleep(delay).await;
//
//         (`recording` is the call's `CallBegan`, `attempt_began` the
//         attempt's, taken before it: see `Names::begin_recording`.)
//
//         With `when`, its verdict is taken here first, on the error, and
//         handed over with the outcome:
//             let decision = match &result { Err(error) => when(error), Ok(_) => Decision::Stop };
//             match after_carried_recorded_decided::<P, _, _>(.., result, decision) { .. }
//
//         An `async fn` that keeps a whole `RetryState` (a deadline, ..)
//         and has no other hook does the same through
//         `after_decided_recorded(&mut slot, start, &mut recording, .., result, decision)`
//         (`Decision::Retry` without a `when`), then `recording.attempt_starts()`.
//
//         The runtime steps: the function's future has one match to check
//         and lay out, not the failure path's matches and returns.
pub(super) fn carried_failure(p: &Ident, parts: &CarriedParts<'_>) -> TokenStream {
    let CarriedParts {
        tracer,
        step,
        args,
        split,
        returned,
        sleep,
        decision,
    } = parts;
    // (`when` looks at the error before the runtime takes the outcome.)
    let (decide, decided) = match decision {
        Some(decision) => (
            quote! {
                let __backoff_decision = match &__backoff_result {
                    #p::Err(__backoff_error) => #decision,
                    #p::Ok(_) => #p::Decision::Stop,
                };
            },
            quote!(, __backoff_decision),
        ),
        None => (TokenStream::new(), TokenStream::new()),
    };
    // (The outcome's binding ends in its own block: with `tracing`, the
    // trace borrows it, and a binding once borrowed counts as held across
    // the sleep's await until its scope ends, which would make the future
    // `Send` only if the outcome is.)
    quote! {
        let __backoff_delay = {
            let __backoff_result = #split;
            #decide
            match #step(
                #args
                #tracer,
                __backoff_result
                #decided
            ) {
                #p::ControlFlow::Continue(__backoff_delay) => __backoff_delay,
                #p::ControlFlow::Break(__backoff_result) => return #returned,
            }
        };
        #sleep
    }
}
