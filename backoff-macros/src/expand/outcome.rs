//! The outcome's split: an accepted `Ok` returns at once; the rest goes to
//! the failure path.

use proc_macro2::TokenStream;
use quote::quote;

use super::hooks::decide_ok;
use super::names::Names;

// Input:  `__backoff_outcome`, the attempt's outcome, and what a success
//         tells the fleet controls.
// Output: let error = match into_result(outcome) { Ok(v) => { on_success; return Ok(v) } Err(e) => e };
//         or, with `when_ok`:
//         let result = into_result(outcome);
//         let ok_decision = match &result {
//             Ok(v) => match when_ok(v) { Stop => { on_success; return result } d => d },
//             Err(_) => Stop,
//         };
//
// Without `when_ok` the failure path holds the error, `__backoff_error`;
// with it, the whole `Result`, `__backoff_result`.
pub(super) fn outcome(n: &Names<'_>, on_success: Option<&TokenStream>) -> TokenStream {
    let (p, split, from_result) = (&n.p, &n.split(), &n.rebuild_fn());
    match &n.args.when_ok {
        None => {
            let succeed = n.succeed();
            quote! {
                let __backoff_error = match #split {
                    #p::Ok(__backoff_value) => {
                        #on_success
                        return #succeed;
                    }
                    // (Failing is the exception: `next_delay`, which the error
                    // leads to, is `#[cold]`, so the success path stays straight.)
                    #p::Err(__backoff_error) => __backoff_error,
                };
            }
        }
        Some(w) => {
            let decide_ok = decide_ok(n, w);
            quote! {
                let __backoff_result = #split;
                let __backoff_ok_decision = match &__backoff_result {
                    #p::Ok(__backoff_value) => match #decide_ok {
                        #p::Decision::Stop => {
                            #on_success
                            return #from_result(__backoff_result);
                        }
                        __backoff_decision => __backoff_decision,
                    },
                    #p::Err(_) => {
                        #p::cold();
                        #p::Decision::Stop
                    }
                };
            }
        }
    }
}
