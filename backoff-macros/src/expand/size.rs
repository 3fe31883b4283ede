//! The size of what the attribute emits, the probe of docs/performance.md
//! ("The expansion's size"): tokens as `proc_macro2` counts them, each
//! punctuation character one and each group's delimiters two, so `::` is
//! two. `RUSTC_BOOTSTRAP=1 cargo rustc -- -Zunpretty=expanded` of the same
//! function shows the same code, the runtime's `tracer!` expanded.

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

/// Tokens in `tokens`, groups' delimiters counted as two.
fn count(tokens: TokenStream) -> usize {
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(g) => 2 + count(g.stream()),
            _ => 1,
        })
        .sum()
}

fn expanded(args: TokenStream, item: TokenStream) -> usize {
    count(super::retry(args, item))
}

/// The `async fn` of the issue that asked for one path: `when`, `when_ok`,
/// `on_retry`, `on_giveup`, `budget` and `circuit`. Its expansion was 1,399
/// tokens when the rule was written out in it (db4ccce); the driver's one
/// call per attempt brought it to 833. The bound guards the figure
/// docs/performance.md states; lower it as the expansion shrinks.
#[test]
fn all_hooks_async_fn_expansion_stays_small() {
    let tokens = expanded(
        quote! {
            when = is_transient,
            when_ok = |v: &u32| *v == 0,
            on_retry = |e, ev| { let _ = (e, ev); },
            on_giveup = |o, g| { let _ = (o, g); },
            budget = BUDGET,
            circuit = BREAKER
        },
        quote! {
            pub async fn all_hooks(x: u32) -> Result<u32, E> { Ok(x) }
        },
    );
    assert!(
        tokens <= 833,
        "the all-hooks expansion grew to {tokens} tokens"
    );
}

/// A plain `async fn` with the default policy, the common case: the
/// compact loop (295 tokens, as at db4ccce).
#[test]
fn plain_async_fn_expansion_stays_small() {
    let tokens = expanded(
        TokenStream::new(),
        quote! {
            pub async fn plain(x: u32) -> Result<u32, E> { Ok(x) }
        },
    );
    assert!(
        tokens <= 295,
        "the plain async expansion grew to {tokens} tokens"
    );
}
