//! A strategy where one stands, composed or not: `exponential(..)`,
//! `constant("1s")`, `immediate`, and the composed forms `chain(A(..,
//! times = n), B)`, `steps("1s", "5s")`, `shorter(A, B)`, `longer(A, B)`,
//! `sum(A, B)`, read and checked by the schedule language's crate
//! (`backoff-schedule`, whose messages `Policy::parse` gives too) from the
//! strategy's tokens.

use std::rc::Rc;

use proc_macro2::{TokenStream, TokenTree};
use syn::parse::ParseStream;
use syn::{Ident, Token};

use super::strategy::StrategyArg;
use super::text::Text;

/// A strategy, composed or not: its name `key` and what follows it.
pub(super) fn parse_strategy(key: &Ident, input: ParseStream<'_>) -> syn::Result<StrategyArg> {
    let mut tokens = vec![TokenTree::Ident(key.clone())];
    // (Its parentheses; or the `=` it is told it takes none.)
    if input.peek(syn::token::Paren) || input.peek(Token![=]) {
        tokens.push(input.parse::<TokenTree>()?);
    }
    let text = Rc::new(Text::of(&tokens.into_iter().collect::<TokenStream>()));
    match backoff_schedule::attribute::strategy(&text.text) {
        Ok(schedule) => Ok(StrategyArg {
            span: text.span(schedule.span),
            schedule: Box::new(schedule),
            text,
        }),
        Err(errors) => Err(combined(&text, &errors)),
    }
}

/// An unknown name where a strategy stands: Effect's combinators are
/// named for the form that does the same.
pub(super) fn unknown_stage(key: &Ident, name: &str) -> syn::Error {
    let text = Text::of(key);
    match backoff_schedule::attribute::strategy(&text.text) {
        Ok(_) => syn::Error::new(key.span(), format!("`{name}` is a strategy")),
        Err(errors) => combined(&text, &errors),
    }
}

fn combined(text: &Text, errors: &[backoff_schedule::Error]) -> syn::Error {
    let mut all = errors.iter().map(|e| text.error(e));
    let mut first = all
        .next()
        .unwrap_or_else(|| syn::Error::new(proc_macro2::Span::call_site(), "expected a strategy"));
    for e in all {
        first.combine(e);
    }
    first
}
