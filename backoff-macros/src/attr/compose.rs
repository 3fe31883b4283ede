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

use super::literal::DurationArg;
use super::names::StrategyKind;
use super::strategy::StrategyArg;
use super::text::Text;

/// A strategy of `kind`, composed or not: its name `key` and what follows
/// it.
pub(super) fn parse_strategy(
    kind: StrategyKind,
    key: &Ident,
    input: ParseStream<'_>,
) -> syn::Result<StrategyArg> {
    let mut tokens = vec![TokenTree::Ident(key.clone())];
    // (Its parentheses; or the `=` it is told it takes none.)
    if input.peek(syn::token::Paren) || input.peek(Token![=]) {
        tokens.push(input.parse::<TokenTree>()?);
    }
    let text = Rc::new(Text::of(&tokens.into_iter().collect::<TokenStream>()));
    match backoff_schedule::attribute::strategy(&text.text) {
        Ok(s) => Ok(StrategyArg {
            kind,
            ..strategy_arg(&s, &text)
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

/// The attribute's strategy for the crate's, each value on its tokens.
fn strategy_arg(s: &backoff_schedule::Strategy, text: &Rc<Text>) -> StrategyArg {
    let duration = |d: &backoff_schedule::Spanned<std::time::Duration>| DurationArg {
        value: d.value,
        span: text.span(d.span),
    };
    let mut arg = StrategyArg::new(s.kind, text.span(s.span), s.nested);
    arg.base = s.base.as_ref().map(duration);
    arg.max = s.max.as_ref().map(duration);
    arg.factor = s.factor.as_ref().map(|f| f.value);
    arg.times = s.times.as_ref().map(|t| t.value);
    arg.lasting = s.lasting.as_ref().map(duration);
    arg.stages = s
        .stages
        .iter()
        .map(|stage| strategy_arg(stage, text))
        .collect();
    arg.steps = s.steps.iter().map(duration).collect();
    arg.schedule = Box::new(s.clone());
    arg.text = Rc::clone(text);
    arg
}
