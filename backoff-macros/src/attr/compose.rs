//! A strategy where one stands, composed or not: the composed forms
//! `chain(A(.., times = n), B)`, `steps("1s", "5s")`, `shorter(A, B)`,
//! `longer(A, B)`, `sum(A, B)`, whose stages are strategies again; a plain
//! strategy is `strategy::parse_leaf`'s.

use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, Lit, Token};

use super::literal::{DurationArg, Slot, parse_duration};
use super::names::{StrategyKind, combinator_home};
use super::strategy::{StrategyArg, parse_leaf, parse_stage_param};
use super::suggest::{composed_example, unknown};
use super::syntax::{comma_separated, eq, in_parens, named_value};
use crate::errors::Errors;

/// A strategy, composed or not: `exponential`, `exponential(...)`,
/// `constant("1s")`, `immediate`, `chain(..)`, `steps(..)`.
pub(super) fn parse_strategy(
    kind: StrategyKind,
    key: &Ident,
    input: ParseStream<'_>,
) -> syn::Result<StrategyArg> {
    parse_strategy_at(kind, key, input, false)
}

/// [`parse_strategy`], or a stage of another form when `nested`.
fn parse_strategy_at(
    kind: StrategyKind,
    key: &Ident,
    input: ParseStream<'_>,
    nested: bool,
) -> syn::Result<StrategyArg> {
    let strategy = StrategyArg::new(kind, key.span(), nested);
    if kind.takes_stages() || kind == StrategyKind::Steps {
        return parse_composed(strategy, key, input);
    }
    parse_leaf(strategy, key, input)
}

/// A composed form's parentheses: its stages, or for `steps` its delays;
/// a stage's own `times = n` among them.
fn parse_composed(
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
    // (`constant("1s")`, `immediate`: a strategy's name first.)
    let strategy = items.iter().find(|item| {
        matches!(item.to_token_stream().into_iter().next(),
            Some(proc_macro2::TokenTree::Ident(i)) if StrategyKind::from_name(&i.to_string()).is_some())
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

/// A stage's `for = "30s"`, with the span of its name.
#[derive(Clone)]
pub(crate) struct ForArg {
    pub(crate) value: DurationArg,
    pub(crate) key: proc_macro2::Span,
}

/// `for = D` inside a stage's parentheses: it ends at the first failure
/// once D has passed since it began.
pub(super) fn parse_for(
    strategy: &mut StrategyArg,
    key: &Ident,
    input: ParseStream<'_>,
) -> syn::Result<()> {
    eq(input, key, "for = \"30s\"")?;
    let value = parse_duration(input, &Slot::new("for", "\"30s\"", None))?;
    if !strategy.nested {
        return Err(syn::Error::new(
            key.span(),
            format!(
                "`for` belongs to a stage of `chain`, `shorter` or `longer`, as in `{}`; for the whole call's time limit write `max_elapsed = ..`",
                "chain(constant(\"1s\", for = \"3s\"), constant(\"1m\"))"
            ),
        ));
    }
    if strategy.lasting.is_some() {
        return Err(syn::Error::new(
            key.span(),
            "duplicate parameter `for`: it is already given; keep one",
        ));
    }
    strategy.lasting = Some(ForArg {
        value,
        key: key.span(),
    });
    Ok(())
}

/// The first stage in `s` that ends by time, or side of `shorter`/`longer`
/// that ends: its `for` or `times` (a schedule whose delays depend on the
/// call).
pub(crate) fn first_end(s: &StrategyArg) -> Option<proc_macro2::Span> {
    let sides = matches!(s.kind, StrategyKind::Shorter | StrategyKind::Longer);
    s.stages.iter().find_map(|stage| {
        let own = stage.times.filter(|_| sides).map(|t| t.span);
        let lasting = stage.lasting.as_ref().map(|f| f.key);
        lasting.or(own).or_else(|| first_end(stage))
    })
}
