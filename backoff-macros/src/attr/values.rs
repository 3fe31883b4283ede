//! The values of the other arguments: `throttled`, `clone`, and the checks
//! on callables and paths.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Expr, Ident, Token};

use super::compose::parse_strategy;
use super::literal::{Slot, parse_attempts, parse_duration};
use super::names::StrategyKind;
use super::syntax::{eq, in_parens, shown_value, ungrouped};
use super::{Hedge, Throttled, arg};

/// `clone(a, b, ..)`: parameter names, each once.
pub(super) fn parse_clone(key: &Ident, input: ParseStream<'_>) -> syn::Result<Vec<Ident>> {
    const EXAMPLE: &str = "`clone(request, path)`";
    if !input.peek(syn::token::Paren) {
        let span = if input.is_empty() {
            key.span()
        } else {
            input.span()
        };
        return Err(syn::Error::new(
            span,
            format!(
                "`clone` takes the parameters to clone for each attempt in parentheses, as in {EXAMPLE}"
            ),
        ));
    }
    let content;
    let parens = syn::parenthesized!(content in input);
    let names = parse_clone_names(&content);
    if names.is_err() {
        // Reported once: what follows the mistake is not also "unexpected".
        content.step(|cursor| {
            let mut rest = *cursor;
            while let Some((_, next)) = rest.token_tree() {
                rest = next;
            }
            Ok(((), rest))
        })?;
    }
    let names = names?;
    if names.is_empty() {
        return Err(syn::Error::new(
            parens.span.join(),
            format!(
                "`clone()` names no parameter; name the by-value parameters the body moves, as in {EXAMPLE}, or remove it"
            ),
        ));
    }
    Ok(names)
}

/// The names inside `clone(..)`.
fn parse_clone_names(content: ParseStream<'_>) -> syn::Result<Vec<Ident>> {
    const EXAMPLE: &str = "`clone(request, path)`";
    let mut names: Vec<Ident> = Vec::new();
    while !content.is_empty() {
        let name = content.call(Ident::parse_any).map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("`clone` takes parameter names, as in {EXAMPLE}"),
            )
        })?;
        if let Some(first) = names.iter().find(|n| **n == name) {
            return Err(syn::Error::new(
                name.span(),
                format!("`{first}` is already in `clone(..)`; name it once"),
            ));
        }
        names.push(name);
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("`clone` takes parameter names separated by `,`, as in {EXAMPLE}"),
            )
        })?;
    }
    Ok(names)
}

/// `when` and `on_retry` take a path or a closure.
pub(super) fn check_callable(name: &str, expr: &Expr) -> syn::Result<()> {
    match ungrouped(expr) {
        Expr::Path(_) | Expr::Closure(_) => Ok(()),
        Expr::Call(call) if matches!(ungrouped(&call.func), Expr::Path(_)) => {
            let function =
                shown_value(Some(&call.func)).unwrap_or_else(|| "is_transient".to_owned());
            Err(syn::Error::new_spanned(
                call,
                format!(
                    "`{name}` takes the function itself, which `#[retry]` calls: write `{name} = {function}`, without the call"
                ),
            ))
        }
        other => Err(syn::Error::new_spanned(
            other,
            format!(
                "`{name}` takes a path to a function or a closure, as in `{name} = is_transient` or `{name} = |e| ...`"
            ),
        )),
    }
}

/// `sleep` takes a path.
pub(super) fn check_path(expr: &Expr) -> syn::Result<()> {
    match ungrouped(expr) {
        Expr::Path(_) => Ok(()),
        other => Err(syn::Error::new_spanned(
            other,
            "`sleep` takes a path to a function, as in `sleep = tokio::time::sleep`; define a function for anything else",
        )),
    }
}

/// `throttled(exponential(base = "500ms", max = "30s"), attempts = 10)`.
pub(super) fn parse_throttled(key: &Ident, input: ParseStream<'_>) -> syn::Result<Throttled> {
    let example = "`throttled(exponential(base = \"500ms\", max = \"30s\"), attempts = 10)`";
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            key.span(),
            format!("`throttled` takes a strategy and an attempt limit, as in {example}"),
        ));
    }
    in_parens(input, |content| parse_throttled_content(content, example))
}

fn parse_throttled_content(content: ParseStream<'_>, example: &str) -> syn::Result<Throttled> {
    let name = content.call(Ident::parse_any).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("`throttled` starts with a strategy, as in {example}"),
        )
    })?;
    if StrategyKind::from_name(&name.unraw().to_string()).is_none() {
        return Err(super::compose::unknown_stage(
            &name,
            &name.unraw().to_string(),
        ));
    }
    let strategy = parse_strategy(&name, content)?;
    let mut attempts = None;
    if content.parse::<Option<Token![,]>>()?.is_some() && !content.is_empty() {
        let key: Ident = content.call(Ident::parse_any)?;
        if key.unraw() != "attempts" {
            return Err(syn::Error::new(
                key.span(),
                format!("`throttled` takes a strategy and `attempts`, as in {example}"),
            ));
        }
        eq(content, &key, "attempts = 10")?;
        let (value, span) = parse_attempts(content, false)?;
        attempts = Some(arg(key.span(), span, value));
        let _ = content.parse::<Option<Token![,]>>()?;
    }
    if !content.is_empty() {
        let rest: TokenStream = content.parse()?;
        return Err(syn::Error::new(
            rest.into_iter()
                .next()
                .map_or_else(Span::call_site, |t| t.span()),
            format!("`throttled` takes a strategy and `attempts`, as in {example}"),
        ));
    }
    Ok(Throttled { strategy, attempts })
}

/// `hedge = "20ms"` (a delay) or `hedge = "p95"` (a percentile of the
/// function's latency, `"p50"` to `"p99.9"`).
pub(super) fn parse_hedge(input: ParseStream<'_>) -> syn::Result<(Hedge, Span)> {
    if let Ok(lit) = input.fork().parse::<syn::LitStr>()
        && let Some(number) = lit.value().trim().strip_prefix('p')
    {
        input.parse::<syn::LitStr>()?;
        let bad = || {
            syn::Error::new(
                lit.span(),
                format!(
                    "`hedge = \"{}\"` is not a percentile; write one from `\"p50\"` to `\"p99.9\"`, as in `hedge = \"p95\"`, or a delay, as in `hedge = \"20ms\"`",
                    lit.value()
                ),
            )
        };
        let value: f64 = number.parse().map_err(|_| bad())?;
        let thousandths = value * 10.0;
        if !(500.0..=999.0).contains(&thousandths) || thousandths.fract() != 0.0 {
            return Err(bad());
        }
        return Ok((Hedge::Percentile(thousandths as u16), lit.span()));
    }
    let d = parse_duration(input, &Slot::new("hedge", "\"20ms\"", None))?;
    Ok((Hedge::After(d.value), d.span))
}
