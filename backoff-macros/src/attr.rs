//! Parsing `#[retry(...)]` arguments into a typed [`RetryArgs`], every value
//! kept with its span. Parsing reports what is malformed in one argument and
//! carries on with the next, so that all mistakes surface together; checks
//! that involve several arguments live in `valid.rs`.

use std::time::Duration;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, LitStr, Token};

use crate::duration;
use crate::errors::Errors;

/// Every argument name, for "did you mean" and the unknown-argument list:
/// the strategies' ([`StrategyKind::NAMES`]), then these.
const OTHER_ARGUMENTS: [&str; 18] = [
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
    "clone",
];

/// [`StrategyKind::NAMES`] and [`OTHER_ARGUMENTS`].
pub(crate) fn arguments() -> Vec<&'static str> {
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
    /// `clone(a, b)`: the by-value parameters each attempt clones.
    pub(crate) clone: Option<Arg<Vec<Ident>>>,
    /// Arguments the attribute meant to give but that did not parse, and
    /// the names that unknown arguments were likely meant to be: a check
    /// that asks for a missing argument skips these, so one mistake is not
    /// reported twice.
    pub(crate) broken: Vec<&'static str>,
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
        let scan = Scan::new(&tokens);
        let parser = |input: ParseStream<'_>| {
            comma_separated(input, errors, |input, end| {
                let name = input
                    .fork()
                    .call(Ident::parse_any)
                    .map(|i| i.unraw().to_string());
                let result = args.parse_one(input, &scan, end);
                if result.is_err()
                    && let Ok(name) = name
                    && let Some(known) = arguments().into_iter().find(|k| *k == name)
                {
                    args.broken.push(known);
                }
                result
            });
            Ok(())
        };
        if let Err(e) = parser.parse2(tokens) {
            errors.push(e);
        }
        args
    }

    /// One argument; `end` is the span of its last token.
    fn parse_one(&mut self, input: ParseStream<'_>, scan: &Scan, end: Span) -> syn::Result<()> {
        if input.peek(Token![,]) {
            // Left for the caller's comma handling, so what follows the
            // extra comma is still parsed.
            return Err(syn::Error::new(input.span(), "extra `,`; remove it"));
        }
        if input.peek(Token![crate]) {
            let key: Token![crate] = input.parse()?;
            if input.peek(Token![:]) && !input.peek(Token![::]) {
                let colon: Token![:] = input.parse()?;
                return Err(syn::Error::new(
                    colon.span,
                    "write `=` here, not `:`, as in `crate = \"::backoff_runtime\"`",
                ));
            }
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
            return set(
                &mut self.krate,
                "crate",
                arg(key.span, lit.span(), path),
                end,
            );
        }
        if input.peek(Lit) {
            let lit: Lit = input.parse()?;
            return Err(positional_literal(&lit));
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
        // `r#attempts` is the identifier `attempts`.
        let name = key.unraw().to_string();
        if let Some(kind) = StrategyKind::from_name(&name) {
            let strategy = parse_strategy(kind, &key, input)?;
            if let Some(first) = &self.strategy {
                return Err(span_range(
                    strategy.span,
                    end,
                    format!(
                        "a second strategy: `{}` is already given; keep one",
                        first.kind.name()
                    ),
                ));
            }
            self.strategy = Some(strategy);
            return Ok(());
        }
        match name.as_str() {
            "attempts" => {
                eq(input, &key, "attempts = 5")?;
                let value = parse_attempts(input, "attempts")?;
                set(
                    &mut self.attempts,
                    "attempts",
                    arg(key.span(), value.1, value.0),
                    end,
                )
            }
            "jitter" => {
                eq(input, &key, "jitter = \"full\"")?;
                let (value, span) = parse_jitter(input)?;
                set(
                    &mut self.jitter,
                    "jitter",
                    arg(key.span(), span, value),
                    end,
                )
            }
            "max_elapsed" => {
                eq(input, &key, "max_elapsed = \"30s\"")?;
                let d = parse_duration(
                    input,
                    &Slot::new(
                        "max_elapsed",
                        "\"30s\"",
                        Some("Policy::exponential(..).max_elapsed({})"),
                    ),
                )?;
                set(
                    &mut self.max_elapsed,
                    "max_elapsed",
                    arg(key.span(), d.span, d),
                    end,
                )
            }
            "throttled" => {
                let value = parse_throttled(&key, input)?;
                set(
                    &mut self.throttled,
                    "throttled",
                    arg(key.span(), key.span(), value),
                    end,
                )
            }
            "attempt_timeout" | "timeout" | "retry_after_max" => {
                let (example, setter) = match name.as_str() {
                    "retry_after_max" => (
                        "\"1m\"",
                        Some("Policy::exponential(..).retry_after_max({})"),
                    ),
                    "timeout" => ("\"30s\"", None),
                    _ => ("\"5s\"", None),
                };
                eq(input, &key, &format!("{name} = {example}"))?;
                let d = parse_duration(input, &Slot::new(&name, example, setter))?;
                let (slot, name) = match name.as_str() {
                    "retry_after_max" => (&mut self.retry_after_max, "retry_after_max"),
                    "timeout" => (&mut self.timeout, "timeout"),
                    _ => (&mut self.attempt_timeout, "attempt_timeout"),
                };
                set(slot, name, arg(key.span(), d.span, d), end)
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
                    end,
                )
            }
            "clone" => {
                let names = parse_clone(&key, input)?;
                set(
                    &mut self.clone,
                    "clone",
                    arg(key.span(), key.span(), names),
                    end,
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
                let (slot, name) = match name.as_str() {
                    "when" => (&mut self.when, "when"),
                    "when_ok" => (&mut self.when_ok, "when_ok"),
                    "on_retry" => (&mut self.on_retry, "on_retry"),
                    "on_giveup" => (&mut self.on_giveup, "on_giveup"),
                    "sleep" => (&mut self.sleep, "sleep"),
                    "budget" => (&mut self.budget, "budget"),
                    "circuit" => (&mut self.circuit, "circuit"),
                    _ => (&mut self.policy, "policy"),
                };
                set(slot, name, arg(key.span(), span, expr), end)
            }
            _ => {
                let (error, meant) = unknown_argument(&key, input, scan);
                self.broken.extend(meant);
                Err(error)
            }
        }
    }
}

const fn arg<T>(key: Span, span: Span, value: T) -> Arg<T> {
    Arg { key, span, value }
}

/// `clone(a, b, ..)`: parameter names, each once.
fn parse_clone(key: &Ident, input: ParseStream<'_>) -> syn::Result<Vec<Ident>> {
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

/// An error underlining from `start` to `end` (both in the attribute).
fn span_range(start: Span, end: Span, message: impl std::fmt::Display) -> syn::Error {
    let tokens: TokenStream = [
        TokenTree::Ident(Ident::new("start", start)),
        TokenTree::Ident(Ident::new("end", end)),
    ]
    .into_iter()
    .collect();
    syn::Error::new_spanned(tokens, message)
}

/// Stores an argument, refusing a second one of the same name: one error,
/// on the second occurrence (its name through `end`).
fn set<T>(slot: &mut Option<Arg<T>>, name: &str, value: Arg<T>, end: Span) -> syn::Result<()> {
    if slot.is_some() {
        return Err(span_range(
            value.key,
            end,
            format!("duplicate argument `{name}`: it is already given; keep one"),
        ));
    }
    *slot = Some(value);
    Ok(())
}

/// Expects `=` after `key`.
fn eq(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<()> {
    if input.peek(Token![:]) && !input.peek(Token![::]) {
        let colon: Token![:] = input.parse()?;
        return Err(syn::Error::new(
            colon.span,
            format!("write `=` here, not `:`, as in `{example}`"),
        ));
    }
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        if !input.is_empty() && !input.peek(Token![,]) {
            return Ok(());
        }
    }
    Err(syn::Error::new(
        key.span(),
        format!("`{}` needs a value, as in `{example}`", key.unraw()),
    ))
}

/// The first strategy at the top level of the attribute, found before
/// parsing, for the messages about a strategy parameter written beside it.
#[derive(Default)]
struct Scan {
    strategy: Option<StrategyKind>,
    /// Whether that strategy already has parameters in parentheses.
    with_params: bool,
}

impl Scan {
    fn new(tokens: &TokenStream) -> Scan {
        let mut scan = Scan::default();
        let mut at_start = true;
        let mut tokens = tokens.clone().into_iter().peekable();
        while let Some(tt) = tokens.next() {
            match &tt {
                TokenTree::Punct(p) if p.as_char() == ',' => {
                    at_start = true;
                    continue;
                }
                TokenTree::Ident(ident) if at_start => {
                    if let Some(kind) = StrategyKind::from_name(&ident.unraw().to_string()) {
                        scan.strategy = Some(kind);
                        scan.with_params = matches!(
                            tokens.peek(),
                            Some(TokenTree::Group(g)) if !g.stream().is_empty()
                        );
                        return scan;
                    }
                }
                _ => {}
            }
            at_start = false;
        }
        scan
    }
}

/// A literal where an argument name belongs: `#[retry(5)]`, `#[retry("1s")]`.
fn positional_literal(lit: &Lit) -> syn::Error {
    let message = match lit {
        Lit::Int(i) => format!(
            "a number needs the name of its argument: for the number of calls, write `attempts = {}`",
            i.base10_digits()
        ),
        Lit::Str(s) => {
            let text = s.value();
            if StrategyKind::from_name(&text).is_some() {
                format!("write the strategy without quotes: `{text}`")
            } else if JITTER_NAMES.contains(&text.as_str()) {
                format!("a jitter needs its argument name: write `jitter = \"{text}\"`")
            } else if duration::parse(&text).is_ok() {
                format!(
                    "a duration needs a strategy around it: write `constant(\"{text}\")` or `exponential(base = \"{text}\")`"
                )
            } else {
                generic_argument_message()
            }
        }
        _ => generic_argument_message(),
    };
    syn::Error::new(lit.span(), message)
}

fn generic_argument_message() -> String {
    format!(
        "expected an argument name such as `attempts = 5` or a strategy such as `exponential(base = \"100ms\")`; the arguments are {}",
        list(&arguments())
    )
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

/// `= value` after an unknown name, parsed for the message.
fn optional_value(input: ParseStream<'_>) -> Option<Expr> {
    if input.peek(Token![=]) && !input.peek(Token![==]) {
        input.parse::<Token![=]>().ok()?;
        return input.parse::<Expr>().ok();
    }
    None
}

/// A value short enough to repeat in a suggestion: a literal or a plain path.
fn shown_value(value: Option<&Expr>) -> Option<String> {
    match ungrouped(value?) {
        Expr::Lit(lit) => Some(lit.lit.to_token_stream().to_string()),
        Expr::Path(path) if path.qself.is_none() => show_path(&path.path),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => shown_value(Some(expr)).map(|v| format!("-{v}")),
        _ => None,
    }
}

/// `a::b::C`, when it has no generic arguments.
fn show_path(path: &syn::Path) -> Option<String> {
    let segments = path
        .segments
        .iter()
        .map(|s| s.arguments.is_none().then(|| s.ident.unraw().to_string()))
        .collect::<Option<Vec<_>>>()?;
    let lead = if path.leading_colon.is_some() {
        "::"
    } else {
        ""
    };
    Some(format!("{lead}{}", segments.join("::")))
}

/// For a strategy parameter's name or another library's name for it: the
/// parameter, and what it is.
fn param_home(name: &str) -> Option<(&'static str, &'static str)> {
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

/// For an argument of the attribute written inside a strategy, or another
/// library's name for one: the argument.
fn top_level_home(name: &str) -> Option<&'static str> {
    if let Some(known) = OTHER_ARGUMENTS.iter().find(|a| **a == name) {
        return Some(known);
    }
    Some(match name {
        "max_attempts" | "tries" | "max_tries" | "max_times" | "retries" | "max_retries" => {
            "attempts"
        }
        "max_elapsed_time" | "max_duration" => "max_elapsed",
        _ => return None,
    })
}

/// An unknown argument: a strategy parameter beside the strategy, another
/// library's name, or a typo. Returns the error and the argument it was
/// probably meant to be.
fn unknown_argument(
    key: &Ident,
    input: ParseStream<'_>,
    scan: &Scan,
) -> (syn::Error, Option<&'static str>) {
    let name = key.unraw().to_string();
    let value = optional_value(input);
    let shown = shown_value(value.as_ref());
    let error = |message: String| syn::Error::new(key.span(), message);
    if let Some((own, _)) = param_home(&name) {
        return (
            error(misplaced_param(&name, own, shown.as_deref(), scan)),
            None,
        );
    }
    // The value, when it has the kind the fix needs.
    let string = shown.as_deref().filter(|v| v.starts_with('"'));
    let number = shown
        .as_deref()
        .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()));
    let path = shown
        .as_deref()
        .filter(|v| v.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == ':'));
    let count = || match value.as_ref().map(ungrouped) {
        Some(Expr::Lit(syn::ExprLit {
            lit: Lit::Int(i), ..
        })) => i.base10_parse::<u64>().ok(),
        _ => None,
    };
    let unlimited = shown.as_deref() == Some("unlimited");
    let (message, meant) = match name.as_str() {
        "max_attempts" | "tries" | "max_tries" | "max_times" | "attempt_count" => {
            let n = if unlimited {
                "unlimited".to_owned()
            } else {
                count().map_or("5".to_owned(), |n| n.to_string())
            };
            (
                format!(
                    "unknown argument `{name}`; the limit on calls, the first included, is `attempts`: write `attempts = {n}`"
                ),
                "attempts",
            )
        }
        "retries" | "max_retries" | "num_retries" | "retry" | "retry_count" | "max_retry" => {
            let fix = match count() {
                _ if unlimited => "write `attempts = unlimited`".to_owned(),
                Some(n) => format!("{n} retries are `attempts = {}`", n.saturating_add(1)),
                None => "write the retries plus one, as in `attempts = 4` for 3 retries".to_owned(),
            };
            (
                format!(
                    "unknown argument `{name}`; `#[retry]` counts calls, the first included, with `attempts`: {fix}"
                ),
                "attempts",
            )
        }
        "max_elapsed_time" | "max_duration" | "max_total_delay" => (
            format!(
                "unknown argument `{name}`; the time limit is `max_elapsed`: write `max_elapsed = {}`",
                string.unwrap_or("\"30s\"")
            ),
            "max_elapsed",
        ),
        "randomization_factor" | "jitter_factor" | "jitter_ratio" | "randomization" => (
            format!(
                "unknown argument `{name}`; a random spread of ±R around each delay is `jitter = scattered(R)`: write `jitter = scattered({})`",
                number.unwrap_or("0.5")
            ),
            "jitter",
        ),
        "retry_if" | "retry_on" | "retry_when" | "should_retry" | "predicate" | "condition"
        | "retry_condition" | "filter" => (
            format!(
                "unknown argument `{name}`; the function that tells which errors to retry is `when`: write `when = {}`",
                path.unwrap_or("is_transient")
            ),
            "when",
        ),
        "notify" | "on_error" | "on_failure" | "on_backoff" | "before_sleep" => (
            format!(
                "unknown argument `{name}`; the function called before each retry is `on_retry`: write `on_retry = {}`",
                path.unwrap_or("log_retry")
            ),
            "on_retry",
        ),
        "sleeper" | "sleep_fn" => (
            format!(
                "unknown argument `{name}`; write `sleep = {}`",
                path.unwrap_or("tokio::time::sleep")
            ),
            "sleep",
        ),
        "strategy" | "backoff" => {
            let named = shown
                .as_deref()
                .map(|s| s.trim_matches('"'))
                .and_then(StrategyKind::from_name);
            let message = match named {
                Some(kind) => format!(
                    "write the strategy by itself, without `{name} =`: `{}`",
                    kind.name()
                ),
                None => format!(
                    "write the strategy by itself, without `{name} =`, as in `exponential(base = \"100ms\")`; the strategies are {}",
                    list(&StrategyKind::NAMES)
                ),
            };
            return (error(message), None);
        }
        _ => {
            let meant = crate::errors::closest(&name, &arguments());
            return (unknown(key, "argument", &arguments()), meant);
        }
    };
    (error(message), Some(meant))
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
fn misplaced_param(name: &str, own: &'static str, shown: Option<&str>, scan: &Scan) -> String {
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
struct Slot {
    /// The argument or parameter (`base`, `max_elapsed`, `constant`).
    what: String,
    /// A literal that fits (`"100ms"`).
    example: &'static str,
    /// How a `Policy` takes a run-time value, `{}` standing for it
    /// (`Policy::exponential(..).max_delay({})`).
    policy: Option<String>,
}

impl Slot {
    fn new(what: &str, example: &'static str, policy: Option<&str>) -> Slot {
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
    fn not_literal(&self, expr: &Expr) -> syn::Error {
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
fn parse_duration(input: ParseStream<'_>, slot: &Slot) -> syn::Result<DurationArg> {
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

/// `5` or `unlimited`.
fn parse_attempts(input: ParseStream<'_>, what: &str) -> syn::Result<(Attempts, Span)> {
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

const JITTER_NAMES: [&str; 4] = ["full", "equal", "half", "none"];

const JITTERS: &str = "`\"full\"`, `\"equal\"`, `\"half\"`, `\"none\"`, `scattered(R)`";

/// `"full"`, `"equal"`, `"half"`, `"none"` or `scattered(0.25)`.
fn parse_jitter(input: ParseStream<'_>) -> syn::Result<(JitterKind, Span)> {
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
fn check_callable(name: &str, expr: &Expr) -> syn::Result<()> {
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
fn check_path(expr: &Expr) -> syn::Result<()> {
    match ungrouped(expr) {
        Expr::Path(_) => Ok(()),
        other => Err(syn::Error::new_spanned(
            other,
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

/// Parses `item, item, ...` with `one` (given the span of the item's last
/// token), recording each item's error and going on after the next comma,
/// so that every mistake is reported.
fn comma_separated(
    input: ParseStream<'_>,
    errors: &mut Errors,
    mut one: impl FnMut(ParseStream<'_>, Span) -> syn::Result<()>,
) {
    while !input.is_empty() {
        if let Err(e) = one(input, item_end(input)) {
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

/// The span of the last token before the next top-level comma.
fn item_end(input: ParseStream<'_>) -> Span {
    let mut cursor = input.cursor();
    let mut end = input.span();
    while let Some((tt, next)) = cursor.token_tree() {
        if matches!(&tt, TokenTree::Punct(p) if p.as_char() == ',') {
            break;
        }
        end = tt.span();
        cursor = next;
    }
    end
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

/// Whether an attribute written `#[retry = ...]` (its source text, from
/// the call site's span) is the key-value form, which rustc refuses by
/// itself ("key-value macro attributes are not supported") before handing
/// the macro the value: the macro then adds no error of its own.
pub(crate) fn is_key_value_form(source: &str) -> bool {
    let rest = source.trim_start();
    let Some(rest) = rest.strip_prefix('#') else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix('[') else {
        return false;
    };
    // The attribute's path: `retry`, `backoff_runtime::retry`.
    let after_path = rest.trim_start().trim_start_matches(|c: char| {
        c.is_alphanumeric() || c == '_' || c == ':' || c.is_whitespace()
    });
    after_path.starts_with('=') && !after_path.starts_with("==")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_value_form_is_told_from_the_list_form() {
        assert!(is_key_value_form("#[retry = \"100ms\"]"));
        assert!(is_key_value_form("#[backoff_runtime::retry= 3]"));
        assert!(!is_key_value_form("#[retry(\"100ms\")]"));
        assert!(!is_key_value_form("#[retry(attempts = 3)]"));
        assert!(!is_key_value_form("#[retry]"));
        assert!(!is_key_value_form("#[retry $($t)*]"));
    }

    fn messages(args: &str) -> Vec<String> {
        let mut errors = Errors::default();
        let tokens: TokenStream = args.parse().unwrap();
        let _ = RetryArgs::parse(tokens, &mut errors);
        match errors.finish() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn raw_identifiers_are_their_names() {
        assert_eq!(messages("r#attempts = 3, r#when = f"), Vec::<String>::new());
    }

    #[test]
    fn literal_only_values_are_translated() {
        for (args, expect) in [
            (
                "exponential(base = Duration::from_millis(100))",
                "write `\"100ms\"`",
            ),
            (
                "exponential(base = std::time::Duration::new(1, 500_000_000))",
                "write `\"1.5s\"`",
            ),
            ("max_elapsed = Duration::from_secs(90)", "write `\"90s\"`"),
            ("jitter = Jitter::Full", "write `jitter = \"full\"`"),
            (
                "jitter = backoff_runtime::Jitter::Scattered(0.2)",
                "write `jitter = scattered(0.2)`",
            ),
            ("jitter = 0.2", "write `jitter = scattered(0.2)`"),
            ("attempts = u32::MAX", "write `attempts = unlimited`"),
            ("attempts = -1", "cannot be negative"),
            (
                "attempts = MAX_TRIES",
                "`Policy::exponential(..).attempts(MAX_TRIES)`",
            ),
            ("exponential(base = BASE)", "`Policy::exponential(BASE)`"),
            ("linear(base = BASE)", "`Policy::linear(BASE)`"),
            (
                "constant(1)",
                "write `constant(\"1s\")` or `constant(\"1ms\")`",
            ),
            ("constant(DELAY)", "`Policy::constant(DELAY)`"),
            (
                "exponential(base = 0.5)",
                "if `0.5` is in seconds, write `\"500ms\"`",
            ),
            ("exponential(factor = FACTOR)", ".factor(FACTOR)`"),
            ("timeout = TIMEOUT", "reads it when the code compiles"),
            (
                "when = is_transient()",
                "write `when = is_transient`, without the call",
            ),
        ] {
            let all = messages(args).join("\n");
            assert!(all.contains(expect), "{args}: {all}");
        }
    }

    #[test]
    fn names_at_the_wrong_level_say_where_they_belong() {
        for (args, expect) in [
            ("base = \"200ms\"", "`exponential(base = \"200ms\")`"),
            (
                "linear(max = \"5s\"), base = \"200ms\"",
                "`linear(.., base = \"200ms\")`",
            ),
            ("constant(\"1s\"), max = \"5s\"", "`constant` has no `max`"),
            ("delay = \"2s\"", "`constant(\"2s\")`"),
            ("factor = 3", "`exponential(factor = 3)`"),
            (
                "max_delay = \"5s\"",
                "the longest delay is the strategy's `max`: write `exponential(max = \"5s\")`",
            ),
            ("initial_delay = \"1s\"", "`exponential(base = \"1s\")`"),
            ("multiplier = 3", "`exponential(factor = 3)`"),
            (
                "exponential(attempts = 5)",
                "write it after the strategy: `exponential(..), attempts = 5`",
            ),
            (
                "exponential(max_elapsed = \"1m\")",
                "`exponential(..), max_elapsed = \"1m\"`",
            ),
            (
                "exponential(max_delay = \"5s\")",
                "the longest delay is `max`: write `max = \"5s\"`",
            ),
            ("immediate(attempts = 3)", "write `immediate, attempts = 3`"),
            ("max_attempts = 5", "write `attempts = 5`"),
            ("max_retries = 3", "3 retries are `attempts = 4`"),
            ("retries = 3", "3 retries are `attempts = 4`"),
            ("tries = 2", "write `attempts = 2`"),
            (
                "strategy = \"exponential\"",
                "without `strategy =`: `exponential`",
            ),
            ("\"exponential\"", "without quotes: `exponential`"),
            (
                "exponential(delay = \"1s\")",
                "the first delay is `base`: write `base = \"1s\"`",
            ),
            ("constant(base = \"1s\")", "the fixed delay is `delay`"),
            ("constant(dealy = \"1s\")", "did you mean `delay`?"),
        ] {
            let all = messages(args).join("\n");
            assert!(all.contains(expect), "{args}: {all}");
        }
    }

    #[test]
    fn one_error_per_mistake() {
        for args in [
            "attempts = 3, attempts = 4",
            "exponential, linear",
            "attempts = 3,, jitter = \"full\"",
            "attempts: 3",
        ] {
            assert_eq!(messages(args).len(), 1, "{args}: {:?}", messages(args));
        }
        assert!(messages(", attempts = 3")[0].contains("extra `,`"));
        assert!(messages("attempts: 3")[0].contains("write `=` here, not `:`"));
    }
}
