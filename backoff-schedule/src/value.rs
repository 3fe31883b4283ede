//! Values: the few expression shapes an argument's value may take
//! (literals, negatives, paths, calls; anything else is "not a literal"),
//! and the literal values read from them: durations, factors, attempt
//! limits, jitters, with the messages for the other forms.

use core::time::Duration;

use crate::lex::{Tok, Tt};
use crate::names::{JITTER_NAMES, JITTERS, JITTERS_OR_STATIC, JitterKind};
use crate::{Attempts, Error, Span, duration};

/// An argument's value.
#[derive(Debug)]
pub(crate) enum Expr {
    Lit(Lit),
    Neg(Box<Expr>, Span),
    Path(Path),
    Call(Box<Expr>, Vec<Expr>, Span),
    /// Any other expression.
    Other(Span),
}

#[derive(Debug)]
pub(crate) struct Path {
    pub(crate) segments: Vec<String>,
    pub(crate) leading: bool,
    pub(crate) span: Span,
}

#[derive(Debug)]
pub(crate) struct Lit {
    pub(crate) kind: LitKind,
    pub(crate) span: Span,
    /// As written.
    pub(crate) text: String,
}

#[derive(Debug)]
pub(crate) enum LitKind {
    Str(String),
    Int(String),
    Float(String),
    Bool,
}

impl Expr {
    pub(crate) fn span(&self) -> Span {
        match self {
            Expr::Lit(l) => l.span,
            Expr::Path(p) => p.span,
            Expr::Neg(_, s) | Expr::Call(_, _, s) | Expr::Other(s) => *s,
        }
    }

    /// The span of its first token (what a proc macro's `Spanned::span`
    /// of an expression gives).
    pub(crate) fn first_span(&self) -> Span {
        match self {
            Expr::Neg(_, s) => Span::new(s.start, s.start + 1),
            Expr::Path(p) if p.leading => Span::new(p.span.start, p.span.start + 1),
            Expr::Path(p) => Span::new(p.span.start, p.span.start + p.segments[0].len()),
            Expr::Call(f, _, _) => f.first_span(),
            other => other.span(),
        }
    }

    /// The single name of a path such as `unlimited`.
    pub(crate) fn ident(&self) -> Option<&str> {
        match self {
            Expr::Path(p) if !p.leading && p.segments.len() == 1 => Some(&p.segments[0]),
            _ => None,
        }
    }
}

/// Reads one expression from the front of `ts` (stopping at a top-level
/// comma, or before a token that cannot continue it): the expression and
/// the trees it took. `None` when `ts` starts with none.
pub(crate) fn expr(ts: &[Tt], src: &str) -> Option<(Expr, usize)> {
    let first = ts.first()?;
    let (mut e, mut used) = match &first.tok {
        Tok::Punct(',') => return None,
        Tok::Punct('-') => {
            let (inner, n) = expr_primary(&ts[1..], src)?;
            let span = first.span.to(inner.span());
            (Expr::Neg(Box::new(inner), span), n + 1)
        }
        _ => expr_primary(ts, src)?,
    };
    // A binary operator, a method call, `?`, a macro's `!`, a struct
    // literal: not a literal, up to the next comma.
    if let Some(next) = ts.get(used)
        && (matches!(next.tok, Tok::Punct(c) if c != ',')
            || matches!(next.tok, Tok::Group('{' | '[', _)))
    {
        while ts.get(used).is_some_and(|t| !t.is_punct(',')) {
            used += 1;
        }
        e = Expr::Other(e.span().to(ts[used - 1].span));
    }
    Some((e, used))
}

/// A literal, a path, a call of a path, or a group.
fn expr_primary(ts: &[Tt], src: &str) -> Option<(Expr, usize)> {
    let first = ts.first()?;
    let lit = |kind| Lit {
        kind,
        span: first.span,
        text: src[first.span.start..first.span.end].to_owned(),
    };
    match &first.tok {
        Tok::Str(s) => Some((Expr::Lit(lit(LitKind::Str(s.clone()))), 1)),
        Tok::Int(d) => Some((Expr::Lit(lit(LitKind::Int(d.clone()))), 1)),
        Tok::Float(d) => Some((Expr::Lit(lit(LitKind::Float(d.clone()))), 1)),
        Tok::Ident(i) if i == "true" || i == "false" => Some((Expr::Lit(lit(LitKind::Bool)), 1)),
        Tok::Group(..) => Some((Expr::Other(first.span), 1)),
        Tok::Punct(',') => None,
        Tok::Punct(':') | Tok::Ident(_) => {
            let mut i = 0;
            let mut leading = false;
            let mut segments = Vec::new();
            loop {
                if ts.get(i).is_some_and(|t| t.is_punct(':'))
                    && ts.get(i + 1).is_some_and(|t| t.is_punct(':'))
                {
                    if i == 0 {
                        leading = true;
                    } else if segments.is_empty() {
                        break;
                    }
                    i += 2;
                } else if i > 0 {
                    break;
                }
                match ts.get(i).and_then(Tt::ident) {
                    Some(name) => segments.push(name.to_owned()),
                    None => {
                        return Some((
                            Expr::Other(first.span.to(ts[i.min(ts.len()).max(1) - 1].span)),
                            i.max(1),
                        ));
                    }
                }
                i += 1;
            }
            let span = first.span.to(ts[i - 1].span);
            let path = Expr::Path(Path {
                segments,
                leading,
                span,
            });
            match ts.get(i).and_then(Tt::parens) {
                Some(inner) => {
                    let args = split_commas(inner)
                        .into_iter()
                        .filter(|a| !a.is_empty())
                        .map(|a| match expr(a, src) {
                            Some((e, n)) if n == a.len() => e,
                            _ => Expr::Other(a[0].span.to(a[a.len() - 1].span)),
                        })
                        .collect();
                    Some((Expr::Call(Box::new(path), args, span.to(ts[i].span)), i + 1))
                }
                None => Some((path, i)),
            }
        }
        // A closure: its parameters may hold commas.
        Tok::Punct('|') => {
            let close = ts[1..]
                .iter()
                .position(|t| t.is_punct('|'))
                .map_or(ts.len(), |i| i + 2);
            let mut end = close.min(ts.len());
            while ts.get(end).is_some_and(|t| !t.is_punct(',')) {
                end += 1;
            }
            Some((Expr::Other(first.span.to(ts[end - 1].span)), end))
        }
        Tok::Punct(_) | Tok::Char => Some((Expr::Other(first.span), 1)),
    }
}

/// The comma-separated parts of a group's trees.
pub(crate) fn split_commas(ts: &[Tt]) -> Vec<&[Tt]> {
    ts.split(|t| t.is_punct(',')).collect()
}

/// A value short enough to repeat in a suggestion: a literal or a plain path.
pub(crate) fn shown_value(value: Option<&Expr>) -> Option<String> {
    match value? {
        Expr::Lit(lit) => Some(lit.text.clone()),
        Expr::Path(p) => Some(format!(
            "{}{}",
            if p.leading { "::" } else { "" },
            p.segments.join("::")
        )),
        Expr::Neg(inner, _) => shown_value(Some(inner)).map(|v| format!("-{v}")),
        _ => None,
    }
}

/// Where a literal value goes, for the messages about other values.
pub(crate) struct Slot {
    /// The argument or parameter (`base`, `max_elapsed`, `constant`).
    what: String,
    /// A literal that fits (`"100ms"`).
    example: String,
    /// How a `Policy` takes a run-time value, `{}` standing for it
    /// (`Policy::exponential(..).max_delay({})`).
    policy: Option<String>,
}

impl Slot {
    pub(crate) fn new(what: &str, example: &str, policy: Option<&str>) -> Slot {
        Slot {
            what: what.to_owned(),
            example: example.to_owned(),
            policy: policy.map(str::to_owned),
        }
    }

    /// The argument or parameter.
    pub(crate) fn what(&self) -> &str {
        &self.what
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
    pub(crate) fn not_literal(&self, expr: &Expr) -> Error {
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
        Error::new(
            expr.span(),
            format!(
                "`{what}` takes a literal, as in `{}`: `#[retry]` reads it when the code compiles{runtime}",
                self.written()
            ),
        )
    }
}

/// A duration: a string literal, parsed now; other forms get the literal
/// they mean (`100` → `"100ms"`, `Duration::from_secs(2)` → `"2s"`).
pub(crate) fn duration_value(expr: &Expr, slot: &Slot) -> Result<(Duration, Span), Error> {
    let what = &slot.what;
    let any = "a duration string, as in `\"250ms\"`, `\"1.5s\"` or `\"1m30s\"`";
    let written = |literal: String| {
        if what == "constant" {
            slot.wrap(&literal)
        } else {
            literal
        }
    };
    let Expr::Lit(lit) = expr else {
        return Err(match expr {
            Expr::Neg(..) => Error::new(
                expr.span(),
                format!(
                    "`{what}` cannot be negative; write a duration string, as in `{}`",
                    slot.written()
                ),
            ),
            _ => match duration_constructor(expr) {
                Some(literal) => Error::new(
                    expr.span(),
                    format!(
                        "`{what}` takes a duration string, read when the code compiles: write `{}`",
                        written(format!("\"{literal}\""))
                    ),
                ),
                None => slot.not_literal(expr),
            },
        });
    };
    let message = match &lit.kind {
        LitKind::Str(s) => {
            let value = duration::parse(s).map_err(|msg| Error::new(lit.span, msg))?;
            return Ok((value, lit.span));
        }
        LitKind::Int(n) => {
            let (ms, s) = (written(format!("\"{n}ms\"")), written(format!("\"{n}s\"")));
            let (first, second) = if what == "constant" { (s, ms) } else { (ms, s) };
            format!(
                "`{what}` takes a duration string with a unit, as in `\"250ms\"`; write `{first}` or `{second}`"
            )
        }
        LitKind::Float(f) => {
            let fix = duration::parse(&format!("{f}s"))
                .map(|d| {
                    format!(
                        "; if `{f}` is in seconds, write `{}`",
                        written(format!("\"{}\"", duration::format(d)))
                    )
                })
                .unwrap_or_default();
            format!("`{what}` takes a duration string with a unit, as in `\"250ms\"`{fix}")
        }
        LitKind::Bool => format!("`{what}` takes {any}"),
    };
    Err(Error::new(lit.span, message))
}

/// The literal for `Duration::from_millis(100)` and its kin, with literal
/// arguments: `"100ms"`, in the constructor's unit.
fn duration_constructor(expr: &Expr) -> Option<String> {
    let Expr::Call(func, args, _) = expr else {
        return None;
    };
    let Expr::Path(func) = &**func else {
        return None;
    };
    let mut segments = func.segments.iter().rev();
    let (Some(constructor), Some(ty)) = (segments.next(), segments.next()) else {
        return None;
    };
    if ty != "Duration" {
        return None;
    }
    let numbers: Vec<String> = args
        .iter()
        .map(|a| match a {
            Expr::Lit(Lit {
                kind: LitKind::Int(d) | LitKind::Float(d),
                ..
            }) => Some(d.clone()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let unit = match constructor.as_str() {
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

/// A number literal, integer or float, with its sign (`-0.5`), and the
/// literal's span; `None` for anything else.
fn signed_number(expr: &Expr) -> Option<Result<(f64, Span), Error>> {
    let (negative, inner) = match expr {
        Expr::Neg(inner, _) => (true, &**inner),
        other => (false, other),
    };
    let Expr::Lit(Lit {
        kind: LitKind::Int(d) | LitKind::Float(d),
        span,
        ..
    }) = inner
    else {
        return None;
    };
    Some(
        d.parse::<f64>()
            .map(|v| (if negative { -v } else { v }, *span))
            .map_err(|e| Error::new(*span, e.to_string())),
    )
}

/// `factor = 2` or `factor = 1.5`; a negative number is kept for the range
/// check.
pub(crate) fn factor_value(expr: &Expr) -> Result<(f64, Span), Error> {
    let message = "`factor` takes a number, as in `factor = 2` or `factor = 1.5`";
    match signed_number(expr) {
        Some(number) => number,
        None => match expr {
            Expr::Lit(lit) => Err(Error::new(lit.span, message)),
            Expr::Neg(inner, _) if matches!(**inner, Expr::Lit(_)) => {
                Err(Error::new(inner.span(), message))
            }
            _ => Err(
                Slot::new("factor", "2", Some("Policy::exponential(..).factor({})"))
                    .not_literal(expr),
            ),
        },
    }
}

/// The error for an `attempts = N` above `u32::MAX`.
pub(crate) fn attempts_out_of_range(n: impl core::fmt::Display) -> String {
    format!(
        "`attempts = {n}` is out of range; the most is {} (or `unlimited`)",
        u32::MAX
    )
}

/// `attempts = 5` or `attempts = unlimited`.
/// `top_level` for the attribute's own `attempts` (whose run-time value a
/// `Policy` can give), not an `on(..)` arm's or `throttled(..)`'s.
pub(crate) fn attempts_value(expr: &Expr, top_level: bool) -> Result<(Attempts, Span), Error> {
    let what = "attempts";
    let message = attribute::ATTEMPTS;
    let runtime = Slot::new(
        what,
        "5",
        top_level.then_some("Policy::exponential(..).attempts({})"),
    );
    if let Some(ident) = expr.ident() {
        if ident == "unlimited" {
            return Ok((Attempts::Unlimited, expr.span()));
        }
        if crate::close(ident, "unlimited") {
            return Err(Error::new(
                expr.span(),
                format!("{message}; did you mean `unlimited`?"),
            ));
        }
        return Err(runtime.not_literal(expr));
    }
    match expr {
        Expr::Path(p)
            if !p.leading
                && p.segments.len() == 2
                && p.segments[1] == "MAX"
                && ["u32", "u64", "usize", "u128", "i32", "i64", "isize"]
                    .contains(&p.segments[0].as_str()) =>
        {
            Err(Error::new(
                p.span,
                format!(
                    "`{what}` takes a literal, read when the code compiles: for no limit on calls, write `{what} = unlimited`"
                ),
            ))
        }
        Expr::Lit(Lit {
            kind: LitKind::Int(d),
            span,
            ..
        }) => {
            let value = d
                .parse::<u64>()
                .map_err(|_| Error::new(*span, attempts_out_of_range(d)))?;
            Ok((Attempts::Limited(value), *span))
        }
        Expr::Lit(Lit {
            kind: LitKind::Str(text),
            span,
            ..
        }) => {
            let fix = if text == "unlimited" || text.parse::<u64>().is_ok() {
                format!(", without quotes: `{what} = {text}`")
            } else {
                format!(", as in `{what} = 5`")
            };
            Err(Error::new(*span, format!("{message}{fix}")))
        }
        Expr::Neg(..) => Err(Error::new(
            expr.span(),
            format!(
                "`{what}` counts calls and cannot be negative; for no limit, write `{what} = unlimited`"
            ),
        )),
        Expr::Lit(lit) => Err(Error::new(lit.span, message)),
        _ => Err(runtime.not_literal(expr)),
    }
}

/// `"full"`, `"equal"`, `"half"`, `"none"`, `"spread"`, `scattered(0.25)`
/// or `range(lo, hi)`.
pub(crate) fn jitter_value(expr: &Expr) -> Result<(JitterKind, Span), Error> {
    let runtime = Slot::new(
        "jitter",
        "\"full\"",
        Some("Policy::exponential(..).jitter({})"),
    );
    if let Some(name) = expr.ident() {
        let lower = name.to_lowercase();
        let message = if JITTER_NAMES.contains(&lower.as_str()) {
            format!("write the jitter in quotes: `jitter = \"{lower}\"`")
        } else if name == "scattered" {
            "`scattered` takes a ratio, as in `jitter = scattered(0.25)`".to_owned()
        } else if name.chars().any(|c| c.is_ascii_lowercase()) {
            format!("unknown jitter `{name}`; expected one of {JITTERS_OR_STATIC}")
        } else {
            // A `static`'s name: your own `Jitterer`.
            return Ok((JitterKind::Custom(name.to_owned()), expr.span()));
        };
        return Err(Error::new(expr.span(), message));
    }
    match expr {
        Expr::Lit(Lit {
            kind: LitKind::Str(value),
            span,
            ..
        }) => {
            let kind = match value.as_str() {
                "full" => JitterKind::Full,
                "equal" | "half" => JitterKind::Equal,
                "none" => JitterKind::None,
                "spread" => JitterKind::Spread,
                other if other.starts_with("scattered") => {
                    return Err(Error::new(
                        *span,
                        "write `scattered` without quotes, as in `jitter = scattered(0.25)`",
                    ));
                }
                other => {
                    // (`"Equal"`: the name in another case.)
                    let lower = other.to_lowercase();
                    let same = JITTER_NAMES.iter().find(|n| **n == lower).copied();
                    let message = match same.or_else(|| crate::closest(&lower, &JITTER_NAMES)) {
                        Some(best) => {
                            format!("unknown jitter `\"{other}\"`; did you mean `\"{best}\"`?")
                        }
                        None => format!("unknown jitter `\"{other}\"`; expected one of {JITTERS}"),
                    };
                    return Err(Error::new(*span, message));
                }
            };
            Ok((kind, *span))
        }
        // `Jitter::Full`, the runtime's name for it.
        Expr::Path(p) if jitter_variant(p).is_some() => {
            let variant = jitter_variant(p).unwrap_or_default();
            Err(Error::new(
                p.span,
                format!(
                    "`jitter` takes a string, read when the code compiles: write `jitter = \"{variant}\"`"
                ),
            ))
        }
        Expr::Call(func, args, span) => call_jitter(expr, func, args, *span, &runtime),
        Expr::Lit(Lit {
            kind: LitKind::Float(_) | LitKind::Int(_),
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
            Err(Error::new(expr.span(), message))
        }
        Expr::Lit(lit) => Err(Error::new(
            lit.span,
            format!("expected a jitter: one of {JITTERS}"),
        )),
        // `jitters::SLOW`: a `static` of another module.
        Expr::Path(p) => Ok((
            JitterKind::Custom(shown_value(Some(expr)).unwrap_or_default()),
            p.span,
        )),
        _ => Err(runtime.not_literal(expr)),
    }
}

/// `scattered(r)`, `range(lo, hi)`, and the calls that are not a jitter.
fn call_jitter(
    expr: &Expr,
    func: &Expr,
    args: &[Expr],
    span: Span,
    runtime: &Slot,
) -> Result<(JitterKind, Span), Error> {
    let name = func.ident();
    if name == Some("range") {
        let message = "`range` takes two multipliers, as in `range(0.5, 1.5)`";
        let [lo, hi] = args else {
            return Err(Error::new(span, message));
        };
        let number = |e: &Expr| match signed_number(e) {
            Some(number) => number.map(|(value, _)| value),
            None => Err(Error::new(e.span(), message)),
        };
        return Ok((
            JitterKind::Range(number(lo)?, number(hi)?),
            func.first_span(),
        ));
    }
    // `spread(0.5)`, `full(..)`: a named jitter given a parameter.
    if let Some(name) = name.filter(|n| JITTER_NAMES.contains(n)) {
        let ratio = shown_value(args.first()).unwrap_or_else(|| "0.25".to_owned());
        let message = if name == "spread" {
            format!(
                "`\"spread\"` takes no ratio: each call keeps one random phase and reads the schedule there, between the delays before and after; write `jitter = \"spread\"`, or, for a ratio around each delay, `jitter = scattered({ratio})`"
            )
        } else {
            format!(
                "`\"{name}\"` takes no parameters: write `jitter = \"{name}\"`, or `jitter = range(lo, hi)` for bounds of your own"
            )
        };
        return Err(Error::new(span, message));
    }
    let scattered = match func {
        _ if name == Some("scattered") => true,
        Expr::Path(p) if jitter_variant(p) == Some("scattered") => false,
        _ => return Err(runtime.not_literal(expr)),
    };
    let ratio_message = "`scattered` takes a ratio, as in `scattered(0.25)`";
    let Some(first) = args.first() else {
        return Err(Error::new(span, ratio_message));
    };
    let ratio = match first {
        Expr::Lit(Lit {
            kind: LitKind::Int(d) | LitKind::Float(d),
            span,
            ..
        }) => d
            .parse::<f64>()
            .map_err(|e| Error::new(*span, e.to_string()))?,
        Expr::Lit(lit) => return Err(Error::new(lit.span, ratio_message)),
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
        return Err(Error::new(
            span,
            format!(
                "`jitter` takes its kind by name, read when the code compiles: write `jitter = scattered({})`",
                shown_value(Some(first)).unwrap_or_default()
            ),
        ));
    }
    if args.len() > 1 {
        // Spanned on what follows the ratio's comma.
        let rest = args[1].span().to(args[args.len() - 1].span());
        return Err(Error::new(
            rest,
            "`scattered` takes one ratio, as in `scattered(0.25)`; remove this",
        ));
    }
    Ok((JitterKind::Scattered(ratio), first.first_span()))
}

/// `Jitter::Full` → `"full"`, `Jitter::Scattered` → `"scattered"`.
fn jitter_variant(path: &Path) -> Option<&'static str> {
    let mut segments = path.segments.iter().rev();
    let (Some(variant), Some(ty)) = (segments.next(), segments.next()) else {
        return None;
    };
    if ty != "Jitter" {
        return None;
    }
    Some(match variant.as_str() {
        "Full" => "full",
        "Equal" => "equal",
        "None" => "none",
        "Scattered" => "scattered",
        "Spread" => "spread",
        _ => return None,
    })
}

/// The attribute's arguments, for `backoff-macros`, which hands them over
/// as text: all of them (`arguments`, which gives back the attribute's own
/// for it to read from its tokens), or one value or strategy (an `on(..)`
/// arm's, `throttled(..)`'s, `hedge`'s).
#[doc(hidden)]
pub mod attribute {
    use core::time::Duration;

    use super::{Expr, Slot, expr};
    use crate::lex::lex;
    use crate::{Attempts, Error, JitterKind, Span};

    /// What `attempts` takes, for an `attempts` with a value of another
    /// kind.
    pub const ATTEMPTS: &str =
        "`attempts` takes a whole number of calls (the first included) or `unlimited`";

    /// `text` as one expression: anything the grammar does not read is
    /// "not a literal", the whole text.
    fn one(text: &str) -> Expr {
        let whole = Expr::Other(Span::new(0, text.len()));
        let Ok(trees) = lex(text) else { return whole };
        match expr(&trees, text) {
            Some((e, n)) if n == trees.len() => e,
            _ => whole,
        }
    }

    /// A duration for `what` (`base`, `timeout`, `constant`); `example` a
    /// literal that fits, `policy` how a `Policy` takes a run-time value
    /// (`{}` standing for it).
    pub fn duration(
        text: &str,
        what: &str,
        example: &str,
        policy: Option<&str>,
    ) -> Result<(Duration, Span), Error> {
        super::duration_value(&one(text), &Slot::new(what, example, policy))
    }

    /// `attempts`' value (`top_level`: the attribute's own, not an arm's).
    pub fn attempts(text: &str, top_level: bool) -> Result<(Attempts, Span), Error> {
        super::attempts_value(&one(text), top_level)
    }

    /// `jitter`'s value (a `static`'s name is a `Custom`).
    pub fn jitter(text: &str) -> Result<(JitterKind, Span), Error> {
        super::jitter_value(&one(text))
    }

    /// A strategy, composed or not, from its name and parentheses.
    pub fn strategy(text: &str) -> Result<crate::Strategy, Vec<Error>> {
        crate::parse::strategy_text(text)
    }

    pub use crate::parse::{Other, Parsed};

    /// The attribute's arguments, as text: the schedule's and `preset`
    /// and the attribute's durations read here, the others by `other`;
    /// what it gave (`None`: the text did not split into tokens), and the
    /// errors `other` was not handed.
    pub fn arguments(text: &str, other: &mut Other<'_>) -> (Option<Parsed>, Vec<Error>) {
        let mut errors = Vec::new();
        let parsed = crate::parse::parse(text, &mut errors, Some(other));
        (parsed, errors)
    }
}
