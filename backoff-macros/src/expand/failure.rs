//! The loop's failure path: from a failed attempt to the next delay, or to
//! giving up.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

/// What the failure path of the loop is made of.
pub(super) struct FailureParts {
    /// The function's name, for `tracing`.
    pub(super) name: String,
    /// Whether `when_ok` is given: the failure path then holds the whole
    /// outcome, `__backoff_result`, else the error, `__backoff_error`.
    pub(super) when_ok: bool,
    /// The retry state's slot, a place of type `Option<RetryState>`.
    pub(super) slot: TokenStream,
    /// Splits `__backoff_outcome`, returning an accepted `Ok`.
    pub(super) outcome: TokenStream,
    /// What the first failure builds the `RetryState` from: a `&Origin`.
    pub(super) start: TokenStream,
    /// The runtime type naming the policy, if the attribute built one.
    pub(super) fixed: Option<TokenStream>,
    /// The `Decision` on `__backoff_error`, a `&E`.
    pub(super) decision: TokenStream,
    /// Whether `when` is given (`decision` then calls it).
    pub(super) when: bool,
    /// The `on_retry` call, if any, on `__backoff_error` (a `&E`) or, with
    /// `when_ok`, on `__backoff_result`.
    pub(super) call_on_retry: Option<TokenStream>,
    /// Reports giving up with `__backoff_result` (tracing, `on_giveup`).
    pub(super) report_give_up: TokenStream,
    /// The `on_giveup` call, if any, on `__backoff_result`.
    pub(super) call_on_giveup: Option<TokenStream>,
    /// Sleeps `__backoff_delay` (with `.await` in an `async fn`).
    pub(super) sleep: TokenStream,
    /// The function's result on giving up with `__backoff_result`.
    pub(super) give_up: TokenStream,
}

// Input:  the parts of the failure path; `__backoff_outcome` holds the
//         attempt's outcome.
// Output: let delay = {
//             let error = match outcome { Ok(v) => return Ok(v), Err(e) => e };
//             match next_delay(&mut slot, || state_from(..), || when(&error)) {  // out of line
//                 Some(delay) => { on_retry(&error, &event_of(&slot, delay)); delay }
//                 None => { on_giveup(&Err(error), &report_of(&slot)); return Err(error) }
//             }
//         };   // the error is dropped here, before the sleep
//         sleep(delay);   // in an `async fn`, awaited out of line
//         recording.attempt_starts();
//
//         (`next_delay` is the `*_recorded` step: it records the attempt,
//         and the retry or the call's end, in the call's `Recording`.)
//         The error stays in the function: the runtime's step, out of line
//         and generic only over the strategy and two closures, never owns
//         it, so nothing is moved in or handed back. An `async fn`'s future
//         never holds the error across the sleep (nor needs it to be `Send`).
//         With `when_ok`, the whole `Result` takes the error's place.
pub(super) fn failure(p: &Ident, parts: &FailureParts) -> TokenStream {
    let FailureParts {
        name,
        when_ok,
        slot,
        outcome,
        start,
        fixed,
        decision,
        when,
        call_on_retry,
        report_give_up,
        call_on_giveup,
        sleep,
        give_up,
    } = parts;
    // (Traces expand to nothing without the runtime's `tracing` feature; the
    // attempt is not an event: no clock read for the trace.)
    let trace_retry = |shown: TokenStream| {
        quote! {
            #p::traced_retry! { #name, #shown, #p::failed_attempt(&#slot), __backoff_delay }
        }
    };
    let (decide, on_retry, on_none) = if *when_ok {
        let trace = trace_retry(quote!(outcome: &__backoff_result));
        (
            quote! {
                match &__backoff_result {
                    #p::Result::Err(__backoff_error) => {
                        #decision
                    }
                    #p::Result::Ok(_) => __backoff_ok_decision,
                }
            },
            quote!(#call_on_retry #trace),
            quote! {
                let __backoff_report = #p::report_of(&#slot);
                #report_give_up
            },
        )
    } else {
        let trace = trace_retry(quote!(error: &__backoff_error));
        // (`on_retry` is called with `__backoff_error` bound to `&E`.)
        let call_on_retry = call_on_retry.as_ref().map(|call| {
            quote! {{
                let __backoff_error = &__backoff_error;
                #call
            }}
        });
        (
            // Without `when`, the verdict is a constant.
            if *when {
                quote! {{
                    let __backoff_error = &__backoff_error;
                    #decision
                }}
            } else {
                decision.clone()
            },
            quote! {
                #call_on_retry
                #trace
            },
            // (The report is made only for what reads it.)
            if call_on_giveup.is_some() {
                quote! {
                    let __backoff_report = #p::report_of(&#slot);
                    #p::traced_give_up! { #name, error: &__backoff_error, &__backoff_report }
                    let __backoff_result = #p::Result::Err(__backoff_error);
                    #call_on_giveup
                }
            } else {
                quote! {
                    #p::traced_give_up! { #name, error: &__backoff_error, &#p::report_of(&#slot) }
                    let __backoff_result = #p::Result::Err(__backoff_error);
                }
            },
        )
    };
    // (Without `when` or `when_ok` the verdict is a constant, which the
    // runtime's `next_retry` folds into its step. Each step records the
    // attempt that failed, and the retry or the call's end, in the call's
    // `Recording`: with `when_ok`, an `Ok` it rejected is `rejected_ok`.)
    let step = if let (false, false, Some(fixed)) = (*when, *when_ok, fixed) {
        quote!(#p::next_retry_fixed_recorded::<#fixed>(&mut #slot, &mut __backoff_recording))
    } else if !*when && !*when_ok {
        quote!(#p::next_retry_recorded(&mut #slot, #start, &mut __backoff_recording))
    } else {
        let rejected_ok = if *when_ok {
            quote!(#p::Result::is_ok(&__backoff_result))
        } else {
            quote!(false)
        };
        quote!(#p::next_delay_recorded(
            &mut #slot,
            #start,
            #decide,
            &mut __backoff_recording,
            #rejected_ok,
        ))
    };
    quote! {
        let __backoff_delay = {
            #outcome
            match #step {
                ::core::option::Option::Some(__backoff_delay) => {
                    #on_retry
                    __backoff_delay
                }
                ::core::option::Option::None => {
                    #on_none
                    return #give_up;
                }
            }
        };
        #sleep
        __backoff_recording.attempt_starts();
    }
}

/// What the failure path of an `async fn` that keeps a `Carried`, or whose
/// only hook is `when`, is made of.
pub(super) struct CarriedParts<'a> {
    /// The function's name, for `tracing`.
    pub(super) name: String,
    /// The runtime's step: `after_carried_recorded::<P, _, _>` (its
    /// `_decided` form with a `when`), or `after_decided_recorded` for a
    /// loop that keeps a `RetryState`.
    pub(super) step: TokenStream,
    /// Its arguments before the trace: `&mut slot, &recording,
    /// attempt_began, function,`, or `&mut slot, start, &mut recording,`.
    pub(super) args: TokenStream,
    /// Whether the step takes a verdict even without a `when`
    /// (`after_decided_recorded`: `Decision::Retry`).
    pub(super) decided: bool,
    /// Splits `__backoff_outcome` into a `Result`.
    pub(super) split: &'a TokenStream,
    /// `RetryResult::from_result`.
    pub(super) from_result: &'a TokenStream,
    /// Sleeps `__backoff_delay`, awaited.
    pub(super) sleep: &'a TokenStream,
    /// What follows the sleep (`__backoff_recording.attempt_starts();` for
    /// a `Recording`).
    pub(super) after_sleep: TokenStream,
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
        name,
        step,
        args,
        decided,
        split,
        from_result,
        sleep,
        after_sleep,
        decision,
    } = parts;
    // (`when` looks at the error before the runtime takes the outcome.)
    let (decide, decided) = match decision {
        Some(decision) => (
            quote! {
                let __backoff_decision = match &__backoff_result {
                    #p::Result::Err(__backoff_error) => #decision,
                    #p::Result::Ok(_) => #p::Decision::Stop,
                };
            },
            quote!(, __backoff_decision),
        ),
        None if *decided => (TokenStream::new(), quote!(, #p::Decision::Retry)),
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
                #p::tracer!(#name, result: &__backoff_result),
                __backoff_result
                #decided
            ) {
                #p::ControlFlow::Continue(__backoff_delay) => __backoff_delay,
                #p::ControlFlow::Break(__backoff_result) => return #from_result(__backoff_result),
            }
        };
        #sleep
        #after_sleep
    }
}
