//! The strategy argument (`exponential(base = "100ms", ..)` and its kin) and
//! its parameters, and the duration and factor literals they take.

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, Token};

use crate::duration;
use crate::errors::Errors;

use super::suggest::{list, optional_value, shown_value, top_level_home, unknown};
use super::values::ungrouped;
use super::{OTHER_ARGUMENTS, Scan, comma_separated, eq, in_parens};

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

/// The strategy's name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum StrategyKind {
    Exponential,
    Linear,
    Constant,
    Fibonacci,
    Decorrelated,
    Immediate,
}

impl StrategyKind {
    const ALL: [StrategyKind; 6] = [
        StrategyKind::Exponential,
        StrategyKind::Linear,
        StrategyKind::Constant,
        StrategyKind::Fibonacci,
        StrategyKind::Decorrelated,
        StrategyKind::Immediate,
    ];

    /// The names, in the order of [`StrategyKind::ALL`].
    pub(super) const NAMES: [&'static str; 6] = {
        let mut names = [""; 6];
        let mut i = 0;
        while i < 6 {
            names[i] = StrategyKind::ALL[i].name();
            i += 1;
        }
        names
    };

    /// The strategy's name in the attribute.
    pub(super) const fn name(self) -> &'static str {
        match self {
            StrategyKind::Exponential => "exponential",
            StrategyKind::Linear => "linear",
            StrategyKind::Constant => "constant",
            StrategyKind::Fibonacci => "fibonacci",
            StrategyKind::Decorrelated => "decorrelated",
            StrategyKind::Immediate => "immediate",
        }
    }

    pub(super) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The parameters this strategy accepts.
    fn params(self) -> &'static [&'static str] {
        match self {
            StrategyKind::Exponential => &["base", "factor", "max"],
            StrategyKind::Linear | StrategyKind::Fibonacci | StrategyKind::Decorrelated => {
                &["base", "max"]
            }
            StrategyKind::Constant => &["delay"],
            StrategyKind::Immediate => &[],
        }
    }
}

/// The strategy argument: `exponential(base = "100ms", factor = 2, max = "5s")`.
pub(crate) struct StrategyArg {
    pub(crate) kind: StrategyKind,
    pub(crate) span: Span,
    /// `base`, or the constant's `delay`.
    pub(crate) base: Option<DurationArg>,
    pub(crate) factor: Option<FactorArg>,
    pub(crate) max: Option<DurationArg>,
}

/// `exponential`, `exponential(...)`, `constant("1s")`, `immediate`.
pub(super) fn parse_strategy(
    kind: StrategyKind,
    key: &Ident,
    input: ParseStream<'_>,
) -> syn::Result<StrategyArg> {
    let strategy = StrategyArg {
        kind,
        span: key.span(),
        base: None,
        factor: None,
        max: None,
    };
    if input.peek(Token![=]) {
        return Err(syn::Error::new(
            key.span(),
            format!(
                "a strategy takes its parameters in parentheses, as in `{}`",
                example(kind)
            ),
        ));
    }
    if !input.peek(syn::token::Paren) {
        return Ok(strategy);
    }
    in_parens(input, |content| parse_params(strategy, content))
}

/// Whether the input starts with `name =`.
fn named_value(input: ParseStream<'_>) -> Option<Ident> {
    let fork = input.fork();
    let name = fork.call(Ident::parse_any).ok()?;
    (fork.peek(Token![=]) && !fork.peek(Token![==])).then_some(name)
}

/// The parenthesized parameters of a strategy.
fn parse_params(mut strategy: StrategyArg, content: ParseStream<'_>) -> syn::Result<StrategyArg> {
    let kind = strategy.kind;
    if kind == StrategyKind::Immediate {
        let span = content.span();
        let named = named_value(content);
        let shown = {
            let fork = content.fork();
            let _ = fork.call(Ident::parse_any);
            shown_value(optional_value(&fork).as_ref()).unwrap_or_else(|| "...".to_owned())
        };
        if !content.parse::<TokenStream>()?.is_empty() {
            let message = match named.map(|n| n.unraw().to_string()) {
                Some(name) if OTHER_ARGUMENTS.contains(&name.as_str()) => format!(
                    "`immediate` takes no parameters; `{name}` is an argument of its own: write `immediate, {name} = {shown}`"
                ),
                _ => "`immediate` takes no parameters; it never waits".to_owned(),
            };
            return Err(syn::Error::new(span, message));
        }
        return Ok(strategy);
    }
    // `constant("1s")`: the delay without its name.
    if kind == StrategyKind::Constant && !content.is_empty() && named_value(content).is_none() {
        strategy.base = Some(parse_duration(
            content,
            &Slot::new("constant", "\"1s\"", Some("Policy::constant({})")),
        )?);
        if !content.is_empty() {
            return Err(syn::Error::new(
                content.span(),
                "`constant` takes one delay, as in `constant(\"1s\")`",
            ));
        }
        return Ok(strategy);
    }
    let mut errors = Errors::default();
    comma_separated(content, &mut errors, |content, _| {
        parse_param(kind, &mut strategy, content)
    });
    errors.finish()?;
    Ok(strategy)
}

fn parse_param(
    kind: StrategyKind,
    strategy: &mut StrategyArg,
    input: ParseStream<'_>,
) -> syn::Result<()> {
    if input.peek(Token![,]) {
        return Err(syn::Error::new(input.span(), "extra `,`; remove it"));
    }
    if input.peek(Lit) {
        let lit: Lit = input.parse()?;
        let value = match &lit {
            Lit::Str(s) if duration::parse(&s.value()).is_ok() => Some(s.value()),
            Lit::Int(i) => Some(format!("{}ms", i.base10_digits())),
            _ => None,
        };
        let message = match value {
            Some(value) => format!(
                "`{}` takes named parameters: write `{}(base = \"{value}\")`",
                kind.name(),
                kind.name(),
            ),
            None => format!(
                "expected a parameter of `{}`: {}",
                kind.name(),
                list(kind.params())
            ),
        };
        return Err(syn::Error::new(lit.span(), message));
    }
    let key = input.call(Ident::parse_any).map_err(|_| {
        syn::Error::new(
            input.span(),
            format!(
                "expected a parameter of `{}`: {}",
                kind.name(),
                list(kind.params())
            ),
        )
    })?;
    let name = key.unraw().to_string();
    if !kind.params().contains(&name.as_str()) {
        return Err(unknown_param(kind, &key, &name, input));
    }
    let example = if name == "factor" {
        "factor = 2".to_owned()
    } else {
        format!("{name} = \"100ms\"")
    };
    eq(input, &key, &example)?;
    let duplicate = || {
        syn::Error::new(
            key.span(),
            format!("duplicate parameter `{name}`: it is already given; keep one"),
        )
    };
    match name.as_str() {
        "factor" => {
            let factor = parse_factor(input)?;
            if strategy.factor.is_some() {
                return Err(duplicate());
            }
            strategy.factor = Some(factor);
        }
        "max" => {
            let setter = format!("Policy::{}(..).max_delay({{}})", kind.name());
            let d = parse_duration(input, &Slot::new("max", "\"10s\"", Some(&setter)))?;
            if strategy.max.is_some() {
                return Err(duplicate());
            }
            strategy.max = Some(d);
        }
        _ => {
            let constructor = format!("Policy::{}({{}})", kind.name());
            let example = if name == "delay" {
                "\"1s\""
            } else {
                "\"100ms\""
            };
            let d = parse_duration(input, &Slot::new(&name, example, Some(&constructor)))?;
            if strategy.base.is_some() {
                return Err(duplicate());
            }
            strategy.base = Some(d);
        }
    }
    Ok(())
}

/// A name inside a strategy's parentheses that is not one of its
/// parameters: an argument of the attribute, another library's name for a
/// parameter, `factor` beside a strategy without one, or a typo.
fn unknown_param(
    kind: StrategyKind,
    key: &Ident,
    name: &str,
    input: ParseStream<'_>,
) -> syn::Error {
    let value = optional_value(input);
    let strategy = kind.name();
    if let Some(argument) = top_level_home(name) {
        let message = if name == argument {
            let shown = shown_value(value.as_ref()).unwrap_or_else(|| "...".to_owned());
            format!(
                "`{argument}` is an argument of its own, not a parameter of `{strategy}`; write it after the strategy: `{strategy}(..), {argument} = {shown}`"
            )
        } else {
            format!(
                "unknown parameter `{name}` of `{strategy}`; the attribute's `{argument}` is an argument of its own, written after the strategy: `{strategy}(..), {argument} = ...`"
            )
        };
        return syn::Error::new(key.span(), message);
    }
    let home = param_home(name).map(|(param, _)| equivalent(param, kind));
    if let Some(param) = home
        && let Some((_, what)) = param_home(param)
        && name != param
        && kind.params().contains(&param)
    {
        let shown = shown_value(value.as_ref())
            .filter(|v| {
                if param == "factor" {
                    v.starts_with(|c: char| c.is_ascii_digit())
                } else {
                    v.starts_with('"')
                }
            })
            .unwrap_or_else(|| param_example(param).to_owned());
        return syn::Error::new(
            key.span(),
            format!(
                "unknown parameter `{name}` of `{strategy}`; {what} is `{param}`: write `{param} = {shown}`"
            ),
        );
    }
    if name == "factor" {
        return syn::Error::new(
            key.span(),
            format!(
                "`factor` applies to `exponential` only; `{strategy}` takes {}",
                list(kind.params())
            ),
        );
    }
    unknown(key, &format!("`{strategy}` parameter"), kind.params())
}

/// For a strategy parameter's name or another library's name for it: the
/// parameter, and what it is.
pub(super) fn param_home(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "base" | "initial_delay" | "initial_interval" | "initial" | "min_delay" | "min"
        | "first_delay" | "start" => ("base", "the first delay"),
        "max" | "max_delay" | "max_interval" | "max_backoff" | "cap" | "maximum" => {
            ("max", "the longest delay")
        }
        "factor" | "multiplier" | "exp_base" | "growth" => ("factor", "the growth factor"),
        "delay" | "interval" | "fixed_delay" | "wait" => ("delay", "the fixed delay"),
        _ => return None,
    })
}

fn param_example(param: &str) -> &'static str {
    match param {
        "factor" => "2",
        "max" => "\"10s\"",
        "delay" => "\"1s\"",
        _ => "\"100ms\"",
    }
}

/// The parameter of `kind` that plays `param`'s part: `constant`'s `delay`
/// is the others' `base`.
fn equivalent(param: &'static str, kind: StrategyKind) -> &'static str {
    match (param, kind) {
        ("delay", k) if k != StrategyKind::Constant => "base",
        ("base", StrategyKind::Constant) => "delay",
        (param, _) => param,
    }
}

/// The message for a strategy parameter (`own`, or another library's
/// `name` for it) written beside the strategy: where it belongs, with the
/// value when it fits (`linear(.., base = "200ms")`), or why it fits
/// nowhere.
pub(super) fn misplaced_param(
    name: &str,
    own: &'static str,
    shown: Option<&str>,
    scan: &Scan,
) -> String {
    let home = scan.strategy.unwrap_or(if own == "delay" {
        StrategyKind::Constant
    } else {
        StrategyKind::Exponential
    });
    let param = equivalent(own, home);
    let what = param_home(param).map_or("it", |(_, what)| what);
    if !home.params().contains(&param) {
        let why = if home == StrategyKind::Immediate {
            "`immediate` has none: it never waits".to_owned()
        } else {
            format!(
                "`{}` has no `{param}`: it takes {}",
                home.name(),
                list(home.params())
            )
        };
        return if name == param {
            format!("`{param}` is a strategy parameter, and {why}")
        } else {
            format!("unknown argument `{name}`; {what} is a strategy's `{param}`, and {why}")
        };
    }
    let fits = |v: &&str| {
        if param == "factor" {
            v.starts_with(|c: char| c.is_ascii_digit())
        } else {
            v.starts_with('"')
        }
    };
    let value = shown.filter(fits).unwrap_or_else(|| param_example(param));
    let rest = if scan.strategy.is_some() && scan.with_params {
        ".., "
    } else {
        ""
    };
    let fix = if param == "delay" && rest.is_empty() {
        format!("constant({value})")
    } else {
        format!("{}({rest}{param} = {value})", home.name())
    };
    if name == param {
        format!("`{param}` is a parameter of the strategy; write it inside: `{fix}`")
    } else {
        format!("unknown argument `{name}`; {what} is the strategy's `{param}`: write `{fix}`")
    }
}

fn example(kind: StrategyKind) -> &'static str {
    match kind {
        StrategyKind::Exponential => "exponential(base = \"100ms\", factor = 2, max = \"10s\")",
        StrategyKind::Linear => "linear(base = \"100ms\", max = \"10s\")",
        StrategyKind::Constant => "constant(\"1s\")",
        StrategyKind::Fibonacci => "fibonacci(base = \"100ms\", max = \"10s\")",
        StrategyKind::Decorrelated => "decorrelated(base = \"100ms\", max = \"10s\")",
        StrategyKind::Immediate => "immediate",
    }
}

/// Where a literal value goes, for the messages about other values.
pub(super) struct Slot {
    /// The argument or parameter (`base`, `max_elapsed`, `constant`).
    what: String,
    /// A literal that fits (`"100ms"`).
    example: &'static str,
    /// How a `Policy` takes a run-time value, `{}` standing for it
    /// (`Policy::exponential(..).max_delay({})`).
    policy: Option<String>,
}

impl Slot {
    pub(super) fn new(what: &str, example: &'static str, policy: Option<&str>) -> Slot {
        Slot {
            what: what.to_owned(),
            example,
            policy: policy.map(str::to_owned),
        }
    }

    /// `what = example`, or `constant(example)`, `scattered(example)`.
    fn written(&self) -> String {
        self.wrap(self.example)
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
fn parse_factor(input: ParseStream<'_>) -> syn::Result<FactorArg> {
    let message = "`factor` takes a number, as in `factor = 2` or `factor = 1.5`";
    let expr: Expr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), message))?;
    let expr = ungrouped(&expr);
    let (negative, inner) = match expr {
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr: inner,
            ..
        }) => (true, ungrouped(inner)),
        other => (false, other),
    };
    let value = match inner {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<f64>()?,
        Expr::Lit(syn::ExprLit {
            lit: Lit::Float(f), ..
        }) => f.base10_parse::<f64>()?,
        Expr::Lit(lit) => return Err(syn::Error::new(lit.span(), message)),
        _ => {
            return Err(
                Slot::new("factor", "2", Some("Policy::exponential(..).factor({})"))
                    .not_literal(expr),
            );
        }
    };
    Ok(FactorArg {
        value: if negative { -value } else { value },
        span: inner.span(),
    })
}
