//! Parsing `#[retry(...)]` arguments into a typed [`RetryArgs`], every value
//! kept with its span. Parsing reports what is malformed in one argument and
//! carries on with the next, so that all mistakes surface together; checks
//! that involve several arguments live in `valid.rs`.

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, LitStr, Token};

use crate::duration;
use crate::errors::Errors;

/// Every argument name, for "did you mean" and the unknown-argument list:
/// the strategies' ([`StrategyKind::NAMES`]), then these.
const OTHER_ARGUMENTS: [&str; 17] = [
    "attempts",
    "jitter",
    "max_elapsed",
    "when",
    "when_ok",
    "on_retry",
    "on_giveup",
    "sleep",
    "policy",
    "crate",
    "throttled",
    "budget",
    "circuit",
    "attempt_timeout",
    "timeout",
    "retry_after_max",
    "context",
];

/// [`StrategyKind::NAMES`] and [`OTHER_ARGUMENTS`].
fn arguments() -> Vec<&'static str> {
    StrategyKind::NAMES
        .into_iter()
        .chain(OTHER_ARGUMENTS)
        .collect()
}

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
    const NAMES: [&'static str; 6] = {
        let mut names = [""; 6];
        let mut i = 0;
        while i < 6 {
            names[i] = StrategyKind::ALL[i].name();
            i += 1;
        }
        names
    };

    /// The strategy's name in the attribute.
    const fn name(self) -> &'static str {
        match self {
            StrategyKind::Exponential => "exponential",
            StrategyKind::Linear => "linear",
            StrategyKind::Constant => "constant",
            StrategyKind::Fibonacci => "fibonacci",
            StrategyKind::Decorrelated => "decorrelated",
            StrategyKind::Immediate => "immediate",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
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

/// `attempts = 5` or `attempts = unlimited`.
#[derive(Clone, Copy)]
pub(crate) enum Attempts {
    Limited(u64),
    Unlimited,
}

/// The `jitter` value.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum JitterKind {
    None,
    Full,
    Equal,
    Scattered(f64),
}

/// A value with the span of the argument it came from.
pub(crate) struct Arg<T> {
    /// The argument's name, for errors about the argument as a whole.
    pub(crate) key: Span,
    /// The value's span, for errors about the value.
    pub(crate) span: Span,
    pub(crate) value: T,
}

/// Everything `#[retry(...)]` was given.
#[derive(Default)]
pub(crate) struct RetryArgs {
    pub(crate) strategy: Option<StrategyArg>,
    pub(crate) attempts: Option<Arg<Attempts>>,
    pub(crate) jitter: Option<Arg<JitterKind>>,
    pub(crate) max_elapsed: Option<Arg<DurationArg>>,
    pub(crate) when: Option<Arg<Expr>>,
    pub(crate) on_retry: Option<Arg<Expr>>,
    pub(crate) sleep: Option<Arg<Expr>>,
    pub(crate) policy: Option<Arg<Expr>>,
    pub(crate) krate: Option<Arg<syn::Path>>,
    pub(crate) throttled: Option<Arg<Throttled>>,
    pub(crate) budget: Option<Arg<Expr>>,
    pub(crate) circuit: Option<Arg<Expr>>,
    pub(crate) attempt_timeout: Option<Arg<DurationArg>>,
    pub(crate) when_ok: Option<Arg<Expr>>,
    pub(crate) on_giveup: Option<Arg<Expr>>,
    pub(crate) timeout: Option<Arg<DurationArg>>,
    pub(crate) retry_after_max: Option<Arg<DurationArg>>,
    /// `context = ctx`: the name bound in the body.
    pub(crate) context: Option<Arg<Ident>>,
}

/// `throttled(STRATEGY, attempts = N)`.
pub(crate) struct Throttled {
    pub(crate) strategy: StrategyArg,
    pub(crate) attempts: Option<Arg<Attempts>>,
}

impl RetryArgs {
    /// Parses the attribute's arguments, recording every problem in `errors`
    /// and keeping whatever parsed.
    pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> RetryArgs {
        let mut args = RetryArgs::default();
        let parser = |input: ParseStream<'_>| {
            comma_separated(input, errors, |input| args.parse_one(input));
            Ok(())
        };
        if let Err(e) = parser.parse2(tokens) {
            errors.push(e);
        }
        args
    }

    fn parse_one(&mut self, input: ParseStream<'_>) -> syn::Result<()> {
        if input.peek(Token![crate]) {
            let key: Token![crate] = input.parse()?;
            input.parse::<Token![=]>()?;
            let lit: LitStr = input.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "`crate` takes the runtime's path as a string, as in `crate = \"::backoff_runtime\"`",
                )
            })?;
            let path = lit.parse_with(syn::Path::parse_mod_style).map_err(|_| {
                syn::Error::new(
                    lit.span(),
                    format!("`{}` is not a path; write the runtime's path, as in `crate = \"::backoff_runtime\"`", lit.value()),
                )
            })?;
            return set(&mut self.krate, "crate", arg(key.span, lit.span(), path));
        }
        let key = match input.call(Ident::parse_any) {
            Ok(key) => key,
            Err(_) => {
                return Err(syn::Error::new(
                    input.span(),
                    format!(
                        "expected an argument name such as `attempts = 5` or a strategy such as `exponential(base = \"100ms\")`; the arguments are {}",
                        list(&arguments())
                    ),
                ));
            }
        };
        let name = key.to_string();
        if let Some(kind) = StrategyKind::from_name(&name) {
            let strategy = parse_strategy(kind, &key, input)?;
            if let Some(first) = &self.strategy {
                let mut e = syn::Error::new(
                    strategy.span,
                    format!(
                        "two strategies: `{}` and `{name}`; keep one",
                        first.kind.name()
                    ),
                );
                e.combine(syn::Error::new(first.span, "the first strategy is here"));
                return Err(e);
            }
            self.strategy = Some(strategy);
            return Ok(());
        }
        match name.as_str() {
            "attempts" => {
                eq(input, &key, "attempts = 5")?;
                let value = parse_attempts(input)?;
                set(
                    &mut self.attempts,
                    "attempts",
                    arg(key.span(), value.1, value.0),
                )
            }
            "jitter" => {
                eq(input, &key, "jitter = \"full\"")?;
                let (value, span) = parse_jitter(input)?;
                set(&mut self.jitter, "jitter", arg(key.span(), span, value))
            }
            "max_elapsed" => {
                eq(input, &key, "max_elapsed = \"30s\"")?;
                let d = parse_duration_lit(input, "max_elapsed")?;
                set(
                    &mut self.max_elapsed,
                    "max_elapsed",
                    arg(key.span(), d.span, d),
                )
            }
            "throttled" => {
                let value = parse_throttled(&key, input)?;
                set(
                    &mut self.throttled,
                    "throttled",
                    arg(key.span(), key.span(), value),
                )
            }
            "attempt_timeout" | "timeout" | "retry_after_max" => {
                let example = match name.as_str() {
                    "retry_after_max" => "retry_after_max = \"1m\"",
                    "timeout" => "timeout = \"30s\"",
                    _ => "attempt_timeout = \"5s\"",
                };
                eq(input, &key, example)?;
                let d = parse_duration_lit(input, &name)?;
                let slot = match name.as_str() {
                    "retry_after_max" => &mut self.retry_after_max,
                    "timeout" => &mut self.timeout,
                    _ => &mut self.attempt_timeout,
                };
                set(slot, &name, arg(key.span(), d.span, d))
            }
            "context" => {
                eq(input, &key, "context = ctx")?;
                let ident = input.call(Ident::parse_any).map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "`context` takes the name to bind in the body, as in `context = ctx`",
                    )
                })?;
                if !input.is_empty() && !input.peek(Token![,]) {
                    return Err(syn::Error::new(
                        input.span(),
                        "`context` takes one name, as in `context = ctx`",
                    ));
                }
                set(
                    &mut self.context,
                    "context",
                    arg(key.span(), ident.span(), ident),
                )
            }
            "when" | "when_ok" | "on_retry" | "on_giveup" | "policy" | "sleep" | "budget"
            | "circuit" => {
                let example = match name.as_str() {
                    "when" => "when = is_transient",
                    "when_ok" => "when_ok = is_unavailable",
                    "on_retry" => "on_retry = log_retry",
                    "on_giveup" => "on_giveup = log_giveup",
                    "sleep" => "sleep = tokio::time::sleep",
                    "budget" => "budget = RETRY_BUDGET",
                    "circuit" => "circuit = BREAKER",
                    _ => "policy = POLICY",
                };
                eq(input, &key, example)?;
                let expr: Expr = input.parse()?;
                // The caller's tokens, not the invisible group a
                // `macro_rules!` may have put around them.
                let span = ungrouped(&expr).span();
                match name.as_str() {
                    "when" | "when_ok" | "on_retry" | "on_giveup" => {
                        check_callable(&name, &expr)?;
                    }
                    "sleep" => check_path(&expr)?,
                    _ => {}
                }
                let slot = match name.as_str() {
                    "when" => &mut self.when,
                    "when_ok" => &mut self.when_ok,
                    "on_retry" => &mut self.on_retry,
                    "on_giveup" => &mut self.on_giveup,
                    "sleep" => &mut self.sleep,
                    "budget" => &mut self.budget,
                    "circuit" => &mut self.circuit,
                    _ => &mut self.policy,
                };
                set(slot, &name, arg(key.span(), span, expr))
            }
            _ => Err(unknown(&key, "argument", &arguments())),
        }
    }
}

const fn arg<T>(key: Span, span: Span, value: T) -> Arg<T> {
    Arg { key, span, value }
}

/// Stores an argument, refusing a second one of the same name.
fn set<T>(slot: &mut Option<Arg<T>>, name: &str, value: Arg<T>) -> syn::Result<()> {
    if let Some(first) = slot {
        let mut e = syn::Error::new(
            value.key,
            format!("duplicate argument `{name}`; each argument may appear once"),
        );
        e.combine(syn::Error::new(
            first.key,
            format!("`{name}` is first given here"),
        ));
        return Err(e);
    }
    *slot = Some(value);
    Ok(())
}

/// Expects `=` after `key`.
fn eq(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<()> {
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        if !input.is_empty() && !input.peek(Token![,]) {
            return Ok(());
        }
    }
    Err(syn::Error::new(
        key.span(),
        format!("`{key}` needs a value, as in `{example}`"),
    ))
}

/// `exponential`, `exponential(...)`, `constant("1s")`, `immediate`.
fn parse_strategy(
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

/// The parenthesized parameters of a strategy.
fn parse_params(mut strategy: StrategyArg, content: ParseStream<'_>) -> syn::Result<StrategyArg> {
    let kind = strategy.kind;
    if kind == StrategyKind::Immediate {
        let span = content.span();
        if !content.parse::<TokenStream>()?.is_empty() {
            return Err(syn::Error::new(
                span,
                "`immediate` takes no parameters; it never waits",
            ));
        }
        return Ok(strategy);
    }
    // `constant("1s")`: the delay without its name.
    if kind == StrategyKind::Constant && content.peek(LitStr) {
        strategy.base = Some(parse_duration_lit(content, "constant")?);
        if !content.is_empty() {
            return Err(syn::Error::new(
                content.span(),
                "`constant` takes one delay, as in `constant(\"1s\")`",
            ));
        }
        return Ok(strategy);
    }
    let mut errors = Errors::default();
    comma_separated(content, &mut errors, |content| {
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
    let name = key.to_string();
    if !kind.params().contains(&name.as_str()) {
        let mut e = unknown(&key, &format!("`{}` parameter", kind.name()), kind.params());
        if name == "factor" {
            e = syn::Error::new(
                key.span(),
                format!(
                    "`factor` applies to `exponential` only; `{}` takes {}",
                    kind.name(),
                    list(kind.params())
                ),
            );
        }
        return Err(e);
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
            format!("duplicate parameter `{name}`; each parameter may appear once"),
        )
    };
    match name.as_str() {
        "factor" => {
            let lit: Lit = input.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "`factor` takes a number, as in `factor = 2` or `factor = 1.5`",
                )
            })?;
            let value = match &lit {
                Lit::Int(i) => i.base10_parse::<f64>(),
                Lit::Float(f) => f.base10_parse::<f64>(),
                _ => Err(syn::Error::new(
                    lit.span(),
                    "`factor` takes a number, as in `factor = 2` or `factor = 1.5`",
                )),
            }?;
            if strategy.factor.is_some() {
                return Err(duplicate());
            }
            strategy.factor = Some(FactorArg {
                value,
                span: lit.span(),
            });
        }
        "max" => {
            let d = parse_duration_lit(input, "max")?;
            if strategy.max.is_some() {
                return Err(duplicate());
            }
            strategy.max = Some(d);
        }
        _ => {
            let d = parse_duration_lit(input, &name)?;
            if strategy.base.is_some() {
                return Err(duplicate());
            }
            strategy.base = Some(d);
        }
    }
    Ok(())
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

/// A string literal holding a duration, parsed now.
fn parse_duration_lit(input: ParseStream<'_>, what: &str) -> syn::Result<DurationArg> {
    let lit: Lit = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!(
                "`{what}` takes a duration string, as in `\"250ms\"`, `\"1.5s\"` or `\"1m30s\"`"
            ),
        )
    })?;
    let Lit::Str(lit) = lit else {
        let hint = match &lit {
            Lit::Int(i) => format!(
                "; write `\"{}ms\"` or `\"{}s\"`",
                i.base10_digits(),
                i.base10_digits()
            ),
            _ => String::new(),
        };
        return Err(syn::Error::new(
            lit.span(),
            format!("`{what}` takes a duration string with a unit, as in `\"250ms\"`{hint}"),
        ));
    };
    let value = duration::parse(&lit.value()).map_err(|msg| syn::Error::new(lit.span(), msg))?;
    Ok(DurationArg {
        value,
        span: lit.span(),
    })
}

/// `5` or `unlimited`.
fn parse_attempts(input: ParseStream<'_>) -> syn::Result<(Attempts, Span)> {
    let message = "`attempts` takes a whole number of calls (the first included) or `unlimited`";
    if input.peek(Ident) {
        let ident: Ident = input.parse()?;
        if ident == "unlimited" {
            return Ok((Attempts::Unlimited, ident.span()));
        }
        let hint = if crate::errors::close(&ident.to_string(), "unlimited") {
            "; did you mean `unlimited`?"
        } else {
            ""
        };
        return Err(syn::Error::new(ident.span(), format!("{message}{hint}")));
    }
    let lit: Lit = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), message))?;
    match &lit {
        Lit::Int(int) => {
            let value = int.base10_parse::<u64>().map_err(|_| {
                syn::Error::new(int.span(), attempts_out_of_range(int.base10_digits()))
            })?;
            Ok((Attempts::Limited(value), int.span()))
        }
        Lit::Str(s) => Err(syn::Error::new(
            s.span(),
            format!("{message}, without quotes: `attempts = {}`", s.value()),
        )),
        _ => Err(syn::Error::new(lit.span(), message)),
    }
}

/// The error for an `attempts = N` above `u32::MAX`.
pub(crate) fn attempts_out_of_range(n: impl std::fmt::Display) -> String {
    format!(
        "`attempts = {n}` is out of range; the most is {} (or `unlimited`)",
        u32::MAX
    )
}

const JITTERS: &str = "`\"full\"`, `\"equal\"`, `\"half\"`, `\"none\"`, `scattered(R)`";

/// `"full"`, `"equal"`, `"half"`, `"none"` or `scattered(0.25)`.
fn parse_jitter(input: ParseStream<'_>) -> syn::Result<(JitterKind, Span)> {
    if input.peek(Ident) {
        let ident: Ident = input.parse()?;
        if ident != "scattered" {
            let message = if ["full", "equal", "half", "none"].contains(&&*ident.to_string()) {
                format!("write the jitter in quotes: `jitter = \"{ident}\"`")
            } else {
                format!("unknown jitter `{ident}`; expected one of {}", JITTERS)
            };
            return Err(syn::Error::new(ident.span(), message));
        }
        return in_parens(input, |content| {
            let lit: Lit = content.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "`scattered` takes a ratio, as in `scattered(0.25)`",
                )
            })?;
            let ratio = match &lit {
                Lit::Float(f) => f.base10_parse::<f64>()?,
                Lit::Int(i) => i.base10_parse::<f64>()?,
                _ => {
                    return Err(syn::Error::new(
                        lit.span(),
                        "`scattered` takes a ratio, as in `scattered(0.25)`",
                    ));
                }
            };
            if !content.is_empty() {
                // Spanned on what follows the ratio's comma.
                let _ = content.parse::<Option<Token![,]>>();
                return Err(syn::Error::new(
                    content.span(),
                    "`scattered` takes one ratio, as in `scattered(0.25)`; remove this",
                ));
            }
            Ok((JitterKind::Scattered(ratio), lit.span()))
        });
    }
    let lit: LitStr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), format!("expected a jitter: one of {}", JITTERS)))?;
    let kind = match lit.value().as_str() {
        "full" => JitterKind::Full,
        "equal" | "half" => JitterKind::Equal,
        "none" => JitterKind::None,
        other if other.starts_with("scattered") => {
            return Err(syn::Error::new(
                lit.span(),
                "write `scattered` without quotes, as in `jitter = scattered(0.25)`",
            ));
        }
        other => {
            return Err(syn::Error::new(
                lit.span(),
                format!("unknown jitter `\"{other}\"`; expected one of {}", JITTERS),
            ));
        }
    };
    Ok((kind, lit.span()))
}

/// `expr` without the invisible groups a `macro_rules!` puts around the
/// fragments it forwards (`$f:expr`, `$f:path`).
fn ungrouped(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => ungrouped(&group.expr),
        other => other,
    }
}

/// `when` and `on_retry` take a path or a closure.
fn check_callable(name: &str, expr: &Expr) -> syn::Result<()> {
    match ungrouped(expr) {
        Expr::Path(_) | Expr::Closure(_) => Ok(()),
        _ => Err(syn::Error::new(
            expr.span(),
            format!(
                "`{name}` takes a path to a function or a closure, as in `{name} = is_transient` or `{name} = |e| ...`"
            ),
        )),
    }
}

/// `sleep` takes a path.
fn check_path(expr: &Expr) -> syn::Result<()> {
    match ungrouped(expr) {
        Expr::Path(_) => Ok(()),
        _ => Err(syn::Error::new(
            expr.span(),
            "`sleep` takes a path to a function, as in `sleep = tokio::time::sleep`; define a function for anything else",
        )),
    }
}

/// `throttled(exponential(base = "500ms", max = "30s"), attempts = 10)`.
fn parse_throttled(key: &Ident, input: ParseStream<'_>) -> syn::Result<Throttled> {
    let example = "`throttled(exponential(base = \"500ms\", max = \"30s\"), attempts = 10)`";
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            key.span(),
            format!("`throttled` takes a strategy and an attempt limit, as in {example}"),
        ));
    }
    in_parens(input, |content| parse_throttled_content(content, example))
}

/// Parses a parenthesized group with `f`; on an error, drops the rest of the
/// group, so that error is the only one reported for it.
fn in_parens<T>(
    input: ParseStream<'_>,
    f: impl FnOnce(ParseStream<'_>) -> syn::Result<T>,
) -> syn::Result<T> {
    let content;
    syn::parenthesized!(content in input);
    let result = f(&content);
    if result.is_err() {
        let _ = content.parse::<TokenStream>();
    }
    result
}

fn parse_throttled_content(content: ParseStream<'_>, example: &str) -> syn::Result<Throttled> {
    let name = content.call(Ident::parse_any).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("`throttled` starts with a strategy, as in {example}"),
        )
    })?;
    let Some(kind) = StrategyKind::from_name(&name.to_string()) else {
        return Err(unknown(&name, "strategy", &StrategyKind::NAMES));
    };
    let strategy = parse_strategy(kind, &name, content)?;
    let mut attempts = None;
    if content.parse::<Option<Token![,]>>()?.is_some() && !content.is_empty() {
        let key: Ident = content.call(Ident::parse_any)?;
        if key != "attempts" {
            return Err(syn::Error::new(
                key.span(),
                format!("`throttled` takes a strategy and `attempts`, as in {example}"),
            ));
        }
        eq(content, &key, "attempts = 10")?;
        let (value, span) = parse_attempts(content)?;
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

/// An unknown name, with "did you mean" when one is close.
fn unknown(key: &Ident, what: &str, known: &[&str]) -> syn::Error {
    let name = key.unraw().to_string();
    match crate::errors::closest(&name, known) {
        Some(best) => syn::Error::new(
            key.span(),
            format!("unknown {what} `{name}`; did you mean `{best}`?"),
        ),
        None => syn::Error::new(
            key.span(),
            format!("unknown {what} `{name}`; expected one of {}", list(known)),
        ),
    }
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        return "nothing".to_owned();
    }
    names
        .iter()
        .map(|n| {
            if n.starts_with('"') || n.contains('(') {
                (*n).to_owned()
            } else {
                format!("`{n}`")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses `item, item, ...` with `one`, recording each item's error and
/// going on after the next comma, so that every mistake is reported.
fn comma_separated(
    input: ParseStream<'_>,
    errors: &mut Errors,
    mut one: impl FnMut(ParseStream<'_>) -> syn::Result<()>,
) {
    while !input.is_empty() {
        if let Err(e) = one(input) {
            errors.push(e);
            skip_to_comma(input);
        }
        if input.is_empty() {
            break;
        }
        if let Err(e) = input.parse::<Token![,]>() {
            errors.push(e);
            skip_to_comma(input);
            let _ = input.parse::<Option<Token![,]>>();
        }
    }
}

/// Error recovery: drops tokens up to the next top-level comma (not
/// consuming it).
fn skip_to_comma(input: ParseStream<'_>) {
    let _ = input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if let proc_macro2::TokenTree::Punct(p) = &tt
                && p.as_char() == ','
            {
                return Ok(((), rest));
            }
            rest = next;
        }
        Ok(((), rest))
    });
}
