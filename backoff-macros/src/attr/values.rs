//! The values of the other arguments: `attempts`, `jitter`, `throttled`,
//! `clone`, and the checks on callables and paths.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, Token};

use super::strategy::{Slot, StrategyKind, parse_strategy};
use super::suggest::{shown_value, unknown};
use super::{Attempts, JitterKind, Throttled, arg, eq, in_parens};

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

/// `5` or `unlimited`.
pub(super) fn parse_attempts(input: ParseStream<'_>, what: &str) -> syn::Result<(Attempts, Span)> {
    let message = "`attempts` takes a whole number of calls (the first included) or `unlimited`";
    let expr: Expr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), message))?;
    let expr = ungrouped(&expr);
    let runtime = Slot::new(what, "5", Some("Policy::exponential(..).attempts({})"));
    if let Expr::Path(path) = expr
        && let Some(ident) = path.path.get_ident()
    {
        let ident = ident.unraw();
        if ident == "unlimited" {
            return Ok((Attempts::Unlimited, ident.span()));
        }
        if crate::errors::close(&ident.to_string(), "unlimited") {
            return Err(syn::Error::new(
                ident.span(),
                format!("{message}; did you mean `unlimited`?"),
            ));
        }
        return Err(runtime.not_literal(expr));
    }
    match expr {
        Expr::Path(path)
            if path.path.segments.len() == 2
                && path.path.segments[1].ident == "MAX"
                && ["u32", "u64", "usize", "u128", "i32", "i64", "isize"]
                    .iter()
                    .any(|t| path.path.segments[0].ident == t) =>
        {
            Err(syn::Error::new_spanned(
                expr,
                format!(
                    "`{what}` takes a literal, read when the code compiles: for no limit on calls, write `{what} = unlimited`"
                ),
            ))
        }
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(int), ..
        }) => {
            let value = int.base10_parse::<u64>().map_err(|_| {
                syn::Error::new(int.span(), attempts_out_of_range(int.base10_digits()))
            })?;
            Ok((Attempts::Limited(value), int.span()))
        }
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Err(syn::Error::new(
            s.span(),
            format!("{message}, without quotes: `{what} = {}`", s.value()),
        )),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            ..
        }) => Err(syn::Error::new_spanned(
            expr,
            format!(
                "`{what}` counts calls and cannot be negative; for no limit, write `{what} = unlimited`"
            ),
        )),
        Expr::Lit(lit) => Err(syn::Error::new(lit.span(), message)),
        _ => Err(runtime.not_literal(expr)),
    }
}

/// The error for an `attempts = N` above `u32::MAX`.
pub(crate) fn attempts_out_of_range(n: impl std::fmt::Display) -> String {
    format!(
        "`attempts = {n}` is out of range; the most is {} (or `unlimited`)",
        u32::MAX
    )
}

pub(super) const JITTER_NAMES: [&str; 5] = ["full", "equal", "half", "none", "spread"];

const JITTERS: &str =
    "`\"full\"`, `\"equal\"`, `\"half\"`, `\"none\"`, `\"spread\"`, `scattered(R)`";

/// `"full"`, `"equal"`, `"half"`, `"none"`, `"spread"` or `scattered(0.25)`.
pub(super) fn parse_jitter(input: ParseStream<'_>) -> syn::Result<(JitterKind, Span)> {
    let expr: Expr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), format!("expected a jitter: one of {JITTERS}")))?;
    let expr = ungrouped(&expr);
    let runtime = Slot::new(
        "jitter",
        "\"full\"",
        Some("Policy::exponential(..).jitter({})"),
    );
    if let Expr::Path(path) = expr
        && let Some(ident) = path.path.get_ident()
    {
        let name = ident.unraw().to_string();
        let lower = name.to_lowercase();
        let message = if JITTER_NAMES.contains(&lower.as_str()) {
            format!("write the jitter in quotes: `jitter = \"{lower}\"`")
        } else if name == "scattered" {
            "`scattered` takes a ratio, as in `jitter = scattered(0.25)`".to_owned()
        } else if name.chars().any(|c| c.is_ascii_lowercase()) {
            format!("unknown jitter `{name}`; expected one of {JITTERS}")
        } else {
            return Err(runtime.not_literal(expr));
        };
        return Err(syn::Error::new(ident.span(), message));
    }
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => {
            let kind = match lit.value().as_str() {
                "full" => JitterKind::Full,
                "equal" | "half" => JitterKind::Equal,
                "none" => JitterKind::None,
                "spread" => JitterKind::Spread,
                other if other.starts_with("scattered") => {
                    return Err(syn::Error::new(
                        lit.span(),
                        "write `scattered` without quotes, as in `jitter = scattered(0.25)`",
                    ));
                }
                other => {
                    let message = match crate::errors::closest(&other.to_lowercase(), &JITTER_NAMES)
                    {
                        Some(best) => {
                            format!("unknown jitter `\"{other}\"`; did you mean `\"{best}\"`?")
                        }
                        None => {
                            format!("unknown jitter `\"{other}\"`; expected one of {JITTERS}")
                        }
                    };
                    return Err(syn::Error::new(lit.span(), message));
                }
            };
            Ok((kind, lit.span()))
        }
        // `Jitter::Full`, the runtime's name for it.
        Expr::Path(path) if jitter_variant(&path.path).is_some() => {
            let variant = jitter_variant(&path.path).unwrap_or_default();
            Err(syn::Error::new_spanned(
                expr,
                format!(
                    "`jitter` takes a string, read when the code compiles: write `jitter = \"{variant}\"`"
                ),
            ))
        }
        Expr::Call(call) => {
            let scattered = match ungrouped(&call.func) {
                Expr::Path(p) if p.path.is_ident("scattered") => true,
                Expr::Path(p) if jitter_variant(&p.path) == Some("scattered") => false,
                _ => return Err(runtime.not_literal(expr)),
            };
            let ratio_message = "`scattered` takes a ratio, as in `scattered(0.25)`";
            let Some(first) = call.args.first() else {
                return Err(syn::Error::new_spanned(expr, ratio_message));
            };
            let ratio = match ungrouped(first) {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Float(f), ..
                }) => f.base10_parse::<f64>()?,
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Int(i), ..
                }) => i.base10_parse::<f64>()?,
                Expr::Lit(lit) => return Err(syn::Error::new(lit.span(), ratio_message)),
                other => {
                    return Err(Slot::new(
                        "scattered",
                        "0.25",
                        Some("Policy::exponential(..).jitter(Jitter::Scattered({}))"),
                    )
                    .not_literal(other));
                }
            };
            if !scattered {
                return Err(syn::Error::new_spanned(
                    expr,
                    format!(
                        "`jitter` takes its kind by name, read when the code compiles: write `jitter = scattered({})`",
                        shown_value(Some(first)).unwrap_or_default()
                    ),
                ));
            }
            if call.args.len() > 1 {
                // Spanned on what follows the ratio's comma.
                let rest: TokenStream = call
                    .args
                    .iter()
                    .skip(1)
                    .map(ToTokens::to_token_stream)
                    .collect();
                return Err(syn::Error::new_spanned(
                    rest,
                    "`scattered` takes one ratio, as in `scattered(0.25)`; remove this",
                ));
            }
            Ok((JitterKind::Scattered(ratio), first.span()))
        }
        Expr::Lit(syn::ExprLit {
            lit: Lit::Float(_) | Lit::Int(_),
            ..
        }) => {
            let shown = shown_value(Some(expr)).unwrap_or_default();
            let in_range = matches!(shown.parse::<f64>(), Ok(r) if r > 0.0 && r <= 1.0);
            let message = if in_range {
                format!(
                    "a jitter is a kind, not a number: for delays spread ±{}% at random, write `jitter = scattered({shown})`",
                    (shown.parse::<f64>().unwrap_or_default() * 100.0).round()
                )
            } else {
                format!("expected a jitter: one of {JITTERS}")
            };
            Err(syn::Error::new_spanned(expr, message))
        }
        Expr::Lit(lit) => Err(syn::Error::new(
            lit.span(),
            format!("expected a jitter: one of {JITTERS}"),
        )),
        _ => Err(runtime.not_literal(expr)),
    }
}

/// `Jitter::Full` → `"full"`, `Jitter::Scattered` → `"scattered"`.
fn jitter_variant(path: &syn::Path) -> Option<&'static str> {
    let mut segments = path.segments.iter().rev();
    let (Some(variant), Some(ty)) = (segments.next(), segments.next()) else {
        return None;
    };
    if ty.ident != "Jitter" {
        return None;
    }
    Some(match variant.ident.to_string().as_str() {
        "Full" => "full",
        "Equal" => "equal",
        "None" => "none",
        "Scattered" => "scattered",
        "Spread" => "spread",
        _ => return None,
    })
}

/// `expr` without the invisible groups a `macro_rules!` puts around the
/// fragments it forwards (`$f:expr`, `$f:path`).
pub(crate) fn ungrouped(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => ungrouped(&group.expr),
        other => other,
    }
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
    let Some(kind) = StrategyKind::from_name(&name.unraw().to_string()) else {
        return Err(unknown(&name, "strategy", &StrategyKind::NAMES));
    };
    let strategy = parse_strategy(kind, &name, content)?;
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
        let (value, span) = parse_attempts(content, "attempts")?;
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
