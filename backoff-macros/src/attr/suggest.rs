//! The messages for unknown and misplaced arguments: "did you mean", where a
//! name belongs, and the values repeated in suggestions, written by the
//! schedule language's crate (`backoff-schedule`, whose messages
//! `Policy::parse` gives too) from the argument's tokens.

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, Lit};

use super::names::StrategyKind;
use super::syntax::optional_value;
use super::text::Text;
use backoff_schedule::attribute;

/// A literal where an argument name belongs: `#[retry(5)]`, `#[retry("1s")]`.
pub(super) fn positional_literal(lit: &Lit) -> syn::Error {
    let text = Text::of(lit);
    text.error(&attribute::positional_literal(&text.text))
}

/// An unknown argument: a strategy parameter beside the strategy, another
/// library's name, or a typo. Returns the error and the argument it was
/// probably meant to be.
pub(super) fn unknown_argument(
    key: &Ident,
    input: ParseStream<'_>,
    scan: &Scan,
) -> (syn::Error, Option<&'static str>) {
    let mut tokens = key.to_token_stream();
    if let Some(value) = optional_value(input) {
        tokens.extend(quote!(= #value));
    }
    let text = Text::of(&tokens);
    let (error, meant) = attribute::unknown_argument(
        &text.text,
        scan.strategy.map(StrategyKind::name),
        scan.with_params,
    );
    (text.error(&error), meant)
}

/// Names for a message: `` `a`, `b` ``.
pub(super) fn list(names: &[&str]) -> String {
    attribute::list(names)
}

/// The first strategy at the top level of the attribute, found before
/// parsing, for the messages about a strategy parameter written beside it.
#[derive(Default)]
pub(super) struct Scan {
    strategy: Option<StrategyKind>,
    /// Whether that strategy already has parameters in parentheses.
    with_params: bool,
}

impl Scan {
    pub(super) fn new(tokens: &TokenStream) -> Scan {
        let mut scan = Scan::default();
        let mut at_start = true;
        let mut tokens = tokens.clone().into_iter().peekable();
        while let Some(tt) = tokens.next() {
            match &tt {
                TokenTree::Punct(p) if p.as_char() == ',' => {
                    at_start = true;
                    continue;
                }
                TokenTree::Ident(ident) if at_start => {
                    if let Some(kind) = StrategyKind::from_name(&ident.unraw().to_string()) {
                        scan.strategy = Some(kind);
                        scan.with_params = matches!(
                            tokens.peek(),
                            Some(TokenTree::Group(g)) if !g.stream().is_empty()
                        );
                        return scan;
                    }
                }
                _ => {}
            }
            at_start = false;
        }
        scan
    }
}
