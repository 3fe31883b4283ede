//! Literal values: durations (parsed when the code compiles, other forms
//! translated to the literal they mean), factors, attempt limits, jitters.

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Expr, Lit};

use super::Attempts;
use super::names::{Custom, JITTER_NAMES, JITTERS, JITTERS_OR_STATIC, JitterKind};
use super::syntax::{shown_value, ungrouped};
use crate::duration;

/// A duration literal such as `"250ms"`, parsed.
#[derive(Clone)]
pub(crate) struct DurationArg {
    pub(crate) value: Duration,
    pub(crate) span: Span,
}

/// `factor = 1.5`.
#[derive(Clone, Copy)]
pub(crate) struct FactorArg {
    pub(crate) value: f64,
    pub(crate) span: Span,
}

/// Where a literal value goes, for the messages about other values.
pub(super) struct Slot {
    /// The argument or parameter (`base`, `max_elapsed`, `constant`).
    what: String,
    /// A literal that fits (`"100ms"`).
    example: String,
    /// How a `Policy` takes a run-time value, `{}` standing for it
    /// (`Policy::exponential(..).max_delay({})`).
    policy: Option<String>,
}

impl Slot {
    pub(super) fn new(what: &str, example: &str, policy: Option<&str>) -> Slot {
        Slot {
            what: what.to_owned(),
            example: example.to_owned(),
            policy: policy.map(str::to_owned),
        }
    }

    /// `what = example`, or `constant(example)`, `scattered(example)`.
    fn written(&self) -> String {
        self.wrap(&self.example)
    }

    /// A value as written in this slot: `base = "1s"`, `constant("1s")`.
    fn wrap(&self, value: &str) -> String {
        match self.what.as_str() {
            "constant" | "scattered" => format!("{}({value})", self.what),
            what => format!("{what} = {value}"),
        }
    }

    /// The error for a value that is not a literal: the attribute reads its
    /// values when the code compiles; a run-time value goes through a
    /// `Policy`. Underlines the whole expression.
    pub(super) fn not_literal(&self, expr: &Expr) -> syn::Error {
        let what = &self.what;
        let runtime = match &self.policy {
            Some(call) => {
                let shown = shown_value(Some(expr)).unwrap_or_else(|| "..".to_owned());
                let call = call.replace("{}", &shown);
                format!(
                    "; for a `const` or a run-time value, build a `Policy` with `{call}` and pass it as `policy = ...`"
                )
            }
            None => String::new(),
        };
        syn::Error::new_spanned(
            ungrouped(expr),
            format!(
                "`{what}` takes a literal, as in `{}`: `#[retry]` reads it when the code compiles{runtime}",
                self.written()
            ),
        )
    }
}

/// A duration: a string literal, parsed now; other forms get the literal
/// they mean (`100` → `"100ms"`, `Duration::from_secs(2)` → `"2s"`).
pub(super) fn parse_duration(input: ParseStream<'_>, slot: &Slot) -> syn::Result<DurationArg> {
    let what = &slot.what;
    let any = "a duration string, as in `\"250ms\"`, `\"1.5s\"` or `\"1m30s\"`";
    let expr: Expr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), format!("`{what}` takes {any}")))?;
    let expr = ungrouped(&expr);
    // `"1s"` as this slot writes it: `constant("1s")`, else `"1s"`.
    let written = |literal: String| {
        if what == "constant" {
            slot.wrap(&literal)
        } else {
            literal
        }
    };
    let Expr::Lit(syn::ExprLit { lit, .. }) = expr else {
        return Err(match expr {
            Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Neg(_),
                ..
            }) => syn::Error::new_spanned(
                expr,
                format!(
                    "`{what}` cannot be negative; write a duration string, as in `{}`",
                    slot.written()
                ),
            ),
            _ => match duration_constructor(expr) {
                Some(literal) => syn::Error::new_spanned(
                    expr,
                    format!(
                        "`{what}` takes a duration string, read when the code compiles: write `{}`",
                        written(format!("\"{literal}\""))
                    ),
                ),
                None => slot.not_literal(expr),
            },
        });
    };
    let message = match lit {
        Lit::Str(lit) => {
            let value =
                duration::parse(&lit.value()).map_err(|msg| syn::Error::new(lit.span(), msg))?;
            return Ok(DurationArg {
                value,
                span: lit.span(),
            });
        }
        Lit::Int(i) => {
            let n = i.base10_digits();
            let (ms, s) = (written(format!("\"{n}ms\"")), written(format!("\"{n}s\"")));
            let (first, second) = if what == "constant" { (s, ms) } else { (ms, s) };
            format!(
                "`{what}` takes a duration string with a unit, as in `\"250ms\"`; write `{first}` or `{second}`"
            )
        }
        Lit::Float(f) => {
            let fix = duration::parse(&format!("{}s", f.base10_digits()))
                .map(|d| {
                    format!(
                        "; if `{}` is in seconds, write `{}`",
                        f.base10_digits(),
                        written(format!("\"{}\"", duration::format(d)))
                    )
                })
                .unwrap_or_default();
            format!("`{what}` takes a duration string with a unit, as in `\"250ms\"`{fix}")
        }
        _ => format!("`{what}` takes {any}"),
    };
    Err(syn::Error::new(lit.span(), message))
}

/// The literal for `Duration::from_millis(100)` and its kin, with literal
/// arguments: `"100ms"`, in the constructor's unit.
fn duration_constructor(expr: &Expr) -> Option<String> {
    let Expr::Call(call) = expr else {
        return None;
    };
    let Expr::Path(func) = ungrouped(&call.func) else {
        return None;
    };
    let mut segments = func.path.segments.iter().rev();
    let (Some(constructor), Some(ty)) = (segments.next(), segments.next()) else {
        return None;
    };
    if ty.ident != "Duration" {
        return None;
    }
    let numbers: Vec<String> = call
        .args
        .iter()
        .map(|a| match ungrouped(a) {
            Expr::Lit(syn::ExprLit {
                lit: Lit::Int(i), ..
            }) => Some(i.base10_digits().to_owned()),
            Expr::Lit(syn::ExprLit {
                lit: Lit::Float(f), ..
            }) => Some(f.base10_digits().to_owned()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let unit = match constructor.ident.to_string().as_str() {
        "from_secs" | "from_secs_f64" | "from_secs_f32" => "s",
        "from_millis" => "ms",
        "from_micros" => "us",
        "from_nanos" => "ns",
        "from_mins" => "m",
        "from_hours" => "h",
        "new" => {
            let [secs, nanos] = numbers.as_slice() else {
                return None;
            };
            let secs = duration::parse(&format!("{secs}s")).ok()?;
            let nanos = duration::parse(&format!("{nanos}ns")).ok()?;
            return Some(duration::format(secs.checked_add(nanos)?));
        }
        _ => return None,
    };
    let [number] = numbers.as_slice() else {
        return None;
    };
    let literal = format!("{number}{unit}");
    duration::parse(&literal).is_ok().then_some(literal)
}

/// `factor = 2` or `factor = 1.5`; a negative number is kept for the range
/// check.
pub(super) fn parse_factor(input: ParseStream<'_>) -> syn::Result<FactorArg> {
    let message = "`factor` takes a number, as in `factor = 2` or `factor = 1.5`";
    let expr: Expr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), message))?;
    let expr = ungrouped(&expr);
    let (value, inner) = match signed_number(expr) {
        Some(number) => number?,
        None => match sign(expr).1 {
            Expr::Lit(lit) => return Err(syn::Error::new(lit.span(), message)),
            _ => {
                return Err(
                    Slot::new("factor", "2", Some("Policy::exponential(..).factor({})"))
                        .not_literal(expr),
                );
            }
        },
    };
    Ok(FactorArg {
        value,
        span: inner.span(),
    })
}

/// `expr` without a leading `-`, and whether it had one.
fn sign(expr: &Expr) -> (bool, &Expr) {
    match ungrouped(expr) {
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => (true, ungrouped(expr)),
        other => (false, other),
    }
}

/// A number literal, integer or float, with its sign (`-0.5`), and the
/// literal itself; `None` for anything else.
fn signed_number(expr: &Expr) -> Option<syn::Result<(f64, &Expr)>> {
    let (negative, inner) = sign(expr);
    let value = match inner {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<f64>(),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Float(f), ..
        }) => f.base10_parse::<f64>(),
        _ => return None,
    };
    Some(value.map(|v| (if negative { -v } else { v }, inner)))
}

/// `5` or `unlimited`.
/// `attempts = n`; `top_level` for the attribute's own (whose run-time
/// value `policy = ..` can give), not an arm's or `throttled(..)`'s.
pub(super) fn parse_attempts(
    input: ParseStream<'_>,
    what: &str,
    top_level: bool,
) -> syn::Result<(Attempts, Span)> {
    let message = "`attempts` takes a whole number of calls (the first included) or `unlimited`";
    let expr: Expr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), message))?;
    let expr = ungrouped(&expr);
    let runtime = Slot::new(
        what,
        "5",
        top_level.then_some("Policy::exponential(..).attempts({})"),
    );
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
        }) => {
            let text = s.value();
            let fix = if text == "unlimited" || text.parse::<u64>().is_ok() {
                format!(", without quotes: `{what} = {text}`")
            } else {
                format!(", as in `{what} = 5`")
            };
            Err(syn::Error::new(s.span(), format!("{message}{fix}")))
        }
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

/// `"full"`, `"equal"`, `"half"`, `"none"` or `scattered(0.25)`.
pub(super) fn parse_jitter(input: ParseStream<'_>) -> syn::Result<(JitterKind, Span)> {
    let expr: Expr = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("expected a jitter: one of {JITTERS_OR_STATIC}"),
        )
    })?;
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
            format!("unknown jitter `{name}`; expected one of {JITTERS_OR_STATIC}")
        } else {
            // A `static`'s name: your own `Jitterer`.
            return Ok((
                JitterKind::Custom(Custom(path.to_token_stream())),
                path.span(),
            ));
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
                    // (`"Equal"`: the name in another case.)
                    let lower = other.to_lowercase();
                    let same = JITTER_NAMES.iter().find(|n| **n == lower).copied();
                    let message =
                        match same.or_else(|| crate::errors::closest(&lower, &JITTER_NAMES)) {
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
        Expr::Call(call) if matches!(ungrouped(&call.func), Expr::Path(p) if p.path.is_ident("range")) => {
            parse_range(call)
        }
        // `spread(0.5)`, `full(..)`: a named jitter given a parameter.
        Expr::Call(call)
            if matches!(ungrouped(&call.func), Expr::Path(p)
                if p.path.get_ident().is_some_and(|i| JITTER_NAMES.contains(&i.to_string().as_str()))) =>
        {
            let Expr::Path(p) = ungrouped(&call.func) else {
                unreachable!("matched above")
            };
            let name = p
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            let ratio = call
                .args
                .first()
                .and_then(|a| shown_value(Some(a)))
                .unwrap_or_else(|| "0.25".to_owned());
            let message = if name == "spread" {
                format!(
                    "`\"spread\"` takes no ratio: each call keeps one random phase and reads the schedule there, between the delays before and after; write `jitter = \"spread\"`, or, for a ratio around each delay, `jitter = scattered({ratio})`"
                )
            } else {
                format!(
                    "`\"{name}\"` takes no parameters: write `jitter = \"{name}\"`, or `jitter = range(lo, hi)` for bounds of your own"
                )
            };
            Err(syn::Error::new_spanned(expr, message))
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
        // `jitters::SLOW`: a `static` of another module.
        Expr::Path(path) if path.qself.is_none() => Ok((
            JitterKind::Custom(Custom(path.to_token_stream())),
            path.span(),
        )),
        _ => Err(runtime.not_literal(expr)),
    }
}

/// `range(lo, hi)`: two numbers, checked against each other in `valid`.
fn parse_range(call: &syn::ExprCall) -> syn::Result<(JitterKind, Span)> {
    let message = "`range` takes two multipliers, as in `range(0.5, 1.5)`";
    if call.args.len() != 2 {
        return Err(syn::Error::new_spanned(call, message));
    }
    let number = |e: &Expr| -> syn::Result<f64> {
        match signed_number(e) {
            Some(number) => number.map(|(value, _)| value),
            None => Err(syn::Error::new_spanned(e, message)),
        }
    };
    let lo = number(&call.args[0])?;
    let hi = number(&call.args[1])?;
    Ok((JitterKind::Range(lo, hi), call.span()))
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
