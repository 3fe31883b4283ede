//! `chaos = CHAOS`: each attempt draws from the user's `Chaos<E>` (the
//! runtime's feature `chaos`) before the body, so that an injected fault is
//! the attempt's error for everything after it.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::names::{Names, local, p_at};

// Input:  chaos = CHAOS
// Output: if let Some(e) = <ChaosFeature as ChaosInjection<_>>::blocking(&CHAOS) {
//             return Err(e);
//         }
//         (in an `async fn`: `::attempt(&CHAOS).await`, which sleeps on tokio)
//         at the start of each attempt's block. Without the feature, the
//         trait is not implemented: one error, on `chaos`, naming the feature.
pub(super) fn inject(n: &Names<'_>) -> Option<TokenStream> {
    let chaos = n.args.chaos.as_ref()?;
    let (key, span, value) = (chaos.key, chaos.span, &chaos.value);
    let pk = p_at(key);
    let draw = match n.is_async {
        true => quote_spanned! {key=>
            <#pk::ChaosFeature as #pk::ChaosInjection<_>>::attempt(&#value).await
        },
        false => quote_spanned! {key=>
            <#pk::ChaosFeature as #pk::ChaosInjection<_>>::blocking(&#value)
        },
    };
    let injected = local("__backoff_injected", span);
    let fail = quote_spanned!(span=> ::core::result::Result::Err(#injected));
    Some(quote! {
        if let ::core::option::Option::Some(#injected) = #draw {
            return #fail;
        }
    })
}
