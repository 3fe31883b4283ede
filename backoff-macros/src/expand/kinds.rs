//! `on(PATTERN, ..)`: the `match` that turns `when`'s value into a kind's
//! `Decision` (the policy's table of kinds is `policy::kinds_static`'s).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;

use crate::attr::{OnAction, RetryArgs};

// Input:  `value`, the call of `when` (spanned on `when`'s value), and the
//         `on(..)` arms.
// Output: match value {
//             Failure::Transient => Decision::Kind(0),
//             Failure::RetryAfter(d) => Decision::KindAfter(1, { let after: Duration = d; after }),
//             Failure::Permanent => Decision::Kind(2),
//         }
//         with no other arm but one whose guard is false (which counts for
//         nothing): a variant without an `on(..)` arm is rustc's
//         "non-exhaustive patterns" error, at `when`'s value, naming it.
//         The value passes through `WhenClassification::classified`: a
//         `bool` or a `Decision` is one error there, in the attribute's terms.
pub(super) fn classify(args: &RetryArgs, p: &Ident, value: TokenStream, at: Span) -> TokenStream {
    let arms = args.on.iter().enumerate().map(|(i, arm)| {
        let pat = &arm.pat;
        let index = u8::try_from(i).unwrap_or(u8::MAX);
        let body = match &arm.action {
            OnAction::After(expr) => {
                let after = Ident::new("__backoff_after", Span::mixed_site());
                quote_spanned! {arm.key=>
                    #p::Decision::KindAfter(#index, {
                        let #after: #p::Duration = #expr;
                        #after
                    })
                }
            }
            _ => quote_spanned!(arm.key=> #p::Decision::Kind(#index)),
        };
        quote!(#pat => #body,)
    });
    // A last arm that never matches (its guard is false), of the macro's
    // own context, so that rustc's error for a variant without an arm
    // suggests no edit of the generated match in the attribute (it only
    // suggests one when the last two arms share a context).
    let never = quote!(_ if false => #p::Decision::Stop,);
    let classified = quote_spanned! {at=>
        <_ as #p::WhenClassification<_>>::classified(#value)
    };
    quote_spanned! {at=>
        match #classified {
            #(#arms)*
            #never
        }
    }
}
