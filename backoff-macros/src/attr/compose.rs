//! The composed forms: `chain(A(.., times = n), B)`, `steps("1s", "5s")`,
//! `shorter(A, B)`, `longer(A, B)`, `sum(A, B)`, and the parameters only a
//! stage takes (`times`) or refuses (`jitter`).

use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, Lit, LitInt, Token};

use super::literal::{Slot, parse_duration};
use super::names::{StrategyKind, combinator_home};
use super::strategy::{StrategyArg, TimesArg, parse_strategy_at};
use super::suggest::unknown;
use super::syntax::{comma_separated, eq, in_parens, named_value};
use crate::errors::Errors;

/// The form written with two stages, for messages.
pub(super) fn composed_example(kind: StrategyKind) -> String {
    match kind {
        StrategyKind::Chain => {
            "chain(exponential(base = \"100ms\", times = 3), constant(\"1m\"))".to_owned()
        }
        StrategyKind::Steps => "steps(\"1s\", \"5s\", \"30s\")".to_owned(),
        StrategyKind::Sum => {
            "sum(constant(\"3m\"), exponential(base = \"2m\", max = \"1h\"))".to_owned()
        }
        other => format!(
            "{}(exponential(base = \"1s\", max = \"1m\"), linear(base = \"3s\", max = \"1m\"))",
            other.name()
        ),
    }
}

/// A composed form's parentheses: its stages, or for `steps` its delays;
/// a stage's own `times = n` among them.
pub(super) fn parse_composed(
    mut strategy: StrategyArg,
    key: &Ident,
    input: ParseStream<'_>,
) -> syn::Result<StrategyArg> {
    let kind = strategy.kind;
    if !input.peek(syn::token::Paren) {
        let what = if kind == StrategyKind::Steps {
            "its delays"
        } else {
            "its stages"
        };
        return Err(syn::Error::new(
            key.span(),
            format!(
                "`{}` takes {what} in parentheses, as in `{}`",
                kind.name(),
                composed_example(kind)
            ),
        ));
    }
    in_parens(input, |content| {
        if kind == StrategyKind::Steps
            && let Some(mistake) = steps_mistake(content)
        {
            let _ = content.parse::<proc_macro2::TokenStream>();
            return Err(mistake);
        }
        let mut errors = Errors::default();
        comma_separated(content, &mut errors, |content, _| {
            parse_item(&mut strategy, content)
        });
        errors.finish()?;
        let (count, least) = if kind == StrategyKind::Steps {
            (strategy.steps.len(), 1)
        } else {
            (strategy.stages.len(), 2)
        };
        if count < least {
            let what = if kind == StrategyKind::Steps {
                "at least one delay"
            } else {
                "at least two stages"
            };
            return Err(syn::Error::new(
                key.span(),
                format!(
                    "`{}` takes {what}, as in `{}`",
                    kind.name(),
                    composed_example(kind)
                ),
            ));
        }
        Ok(strategy)
    })
}

/// `steps(..)` written with numbers for delays, or with strategies: one
/// error for the whole list, on its first such item.
fn steps_mistake(content: ParseStream<'_>) -> Option<syn::Error> {
    use quote::ToTokens;
    let items = content
        .fork()
        .call(syn::punctuated::Punctuated::<syn::Expr, Token![,]>::parse_terminated)
        .ok()?;
    let strategy = items.iter().find(|item| {
        let name = match super::syntax::ungrouped(item) {
            syn::Expr::Call(call) => match super::syntax::ungrouped(&call.func) {
                syn::Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
                _ => None,
            },
            syn::Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
            _ => None,
        };
        name.is_some_and(|n| StrategyKind::from_name(&n).is_some())
    });
    if let Some(item) = strategy {
        return Some(syn::Error::new_spanned(
            item,
            format!(
                "`steps` takes delays, as in `{}`, not strategies; to run one strategy after another, write `{}`",
                composed_example(StrategyKind::Steps),
                composed_example(StrategyKind::Chain)
            ),
        ));
    }
    let is_int = |item: &syn::Expr| {
        matches!(
            item,
            syn::Expr::Lit(syn::ExprLit {
                lit: Lit::Int(_),
                ..
            })
        )
    };
    let first = items.iter().find(|item| is_int(item))?;
    let written: Vec<String> = items
        .iter()
        .map(|item| match item {
            syn::Expr::Lit(syn::ExprLit {
                lit: Lit::Int(i), ..
            }) => format!("\"{}s\"", i.base10_digits()),
            other => other.to_token_stream().to_string(),
        })
        .collect();
    Some(syn::Error::new_spanned(
        first,
        format!(
            "the delays of `steps` are durations with a unit: write `steps({})` for seconds, or `ms` for milliseconds",
            written.join(", ")
        ),
    ))
}

/// One stage (or delay of `steps`), or the form's own `times = n`.
fn parse_item(strategy: &mut StrategyArg, content: ParseStream<'_>) -> syn::Result<()> {
    let kind = strategy.kind;
    if content.peek(Token![,]) {
        return Err(syn::Error::new(content.span(), "extra `,`; remove it"));
    }
    if let Some(name) = named_value(content) {
        let text = name.unraw().to_string();
        let key = content.call(Ident::parse_any)?;
        if let Some(done) = parse_stage_param(strategy, &key, &text, content) {
            return done;
        }
        return Err(syn::Error::new(
            key.span(),
            format!(
                "`{}` takes no parameter `{text}`; give each stage its own parameters, as in `{}`",
                kind.name(),
                composed_example(kind)
            ),
        ));
    }
    if kind == StrategyKind::Steps {
        let d = parse_duration(content, &Slot::new("steps", "\"1s\"", None))?;
        strategy.steps.push(d);
        return Ok(());
    }
    if content.peek(Lit) {
        let lit: Lit = content.parse()?;
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "a stage of `{}` is a strategy, as in `{}`; for a list of delays write `steps(..)`",
                kind.name(),
                composed_example(kind)
            ),
        ));
    }
    let key = content.call(Ident::parse_any)?;
    let name = key.unraw().to_string();
    let Some(stage) = StrategyKind::from_name(&name) else {
        return Err(unknown_stage(&key, &name));
    };
    let stage = parse_strategy_at(stage, &key, content, true)?;
    strategy.stages.push(stage);
    Ok(())
}

/// An unknown name where a strategy stands: Effect's combinators are
/// named for the form that does the same.
pub(super) fn unknown_stage(key: &Ident, name: &str) -> syn::Error {
    match combinator_home(name) {
        Some(form) => {
            let does = match form {
                "shorter" => "waits the shorter of two schedules' delays",
                "longer" => "waits the longer of two schedules' delays",
                _ => "runs one schedule, then the next",
            };
            syn::Error::new(
                key.span(),
                format!(
                    "unknown strategy `{name}`; did you mean `{form}`? it {does}, as Effect's `{name}` does: `{}`",
                    composed_example(StrategyKind::from_name(form).unwrap_or(StrategyKind::Chain))
                ),
            )
        }
        None => unknown(key, "strategy", &StrategyKind::NAMES),
    }
}

/// `times = n` or `jitter = ..` inside a strategy's parentheses: `None`
/// when `name` is neither, else the parameter parsed or its error.
pub(super) fn parse_stage_param(
    strategy: &mut StrategyArg,
    key: &Ident,
    name: &str,
    input: ParseStream<'_>,
) -> Option<syn::Result<()>> {
    match name {
        "times" => Some(parse_times(strategy, key, input)),
        "jitter" if strategy.nested => {
            // (The caller drops the value: the error is about the name.)
            Some(Err(syn::Error::new(
                key.span(),
                "`jitter` applies once, to the composed delay, not to one stage; remove it here and write it after the whole strategy, as in `chain(..), jitter = \"full\"`",
            )))
        }
        _ => None,
    }
}

fn parse_times(strategy: &mut StrategyArg, key: &Ident, input: ParseStream<'_>) -> syn::Result<()> {
    if !strategy.nested {
        return Err(syn::Error::new(
            key.span(),
            format!(
                "`times` belongs to a stage of `chain`, as in `{}`; for the whole call's limit write `attempts = ..`",
                composed_example(StrategyKind::Chain)
            ),
        ));
    }
    eq(input, key, "times = 3")?;
    let lit: LitInt = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "`times` takes a whole number of retries, as in `times = 3`",
        )
    })?;
    let value = lit.base10_parse::<u64>()?;
    if strategy.times.is_some() {
        return Err(syn::Error::new(
            key.span(),
            "duplicate parameter `times`: it is already given; keep one",
        ));
    }
    strategy.times = Some(TimesArg {
        value,
        span: key.span(),
    });
    Ok(())
}
