//! Parsing `#[retry(...)]` arguments into a typed [`RetryArgs`], every value
//! kept with its span. Parsing reports what is malformed in one argument and
//! carries on with the next, so that all mistakes surface together; checks
//! that involve several arguments live in `valid.rs`.

use std::rc::Rc;
use std::time::Duration;

use backoff_schedule::Spanned;
use backoff_schedule::attribute::Parsed;
use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned as _;
use syn::{Expr, Ident, LitStr, Token};

use crate::errors::Errors;

pub(crate) mod compose;
pub(crate) mod defaults;
mod kinds;
mod literal;
mod names;
pub(crate) mod schedule;
mod strategy;
mod syntax;
#[cfg(test)]
mod tests;
mod text;
mod values;

pub(crate) use kinds::{OnAction, OnArm};
pub(crate) use literal::DurationArg;
use names::Custom;
#[cfg(test)]
pub(crate) use names::arguments;
pub(crate) use names::{JitterKind, StrategyKind};
pub(crate) use strategy::StrategyArg;
use syntax::eq;
pub(crate) use syntax::ungrouped;
use text::Text;
use values::{check_callable, check_path, parse_clone, parse_hedge, parse_throttled};

/// `attempts = 5` or `attempts = unlimited`.
pub(crate) use backoff_schedule::Attempts;

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
    /// `on_hedge = F`: called when the hedge delay starts an attempt.
    pub(crate) on_hedge: Option<Arg<Expr>>,
    pub(crate) sleep: Option<Arg<Expr>>,
    pub(crate) policy: Option<Arg<Expr>>,
    pub(crate) krate: Option<Arg<syn::Path>>,
    pub(crate) throttled: Option<Arg<Throttled>>,
    pub(crate) budget: Option<Arg<Expr>>,
    pub(crate) circuit: Option<Arg<Expr>>,
    pub(crate) throttle: Option<Arg<Expr>>,
    /// `hedge = "20ms"` or `hedge = "p95"`.
    pub(crate) hedge: Option<Arg<Hedge>>,
    pub(crate) attempt_timeout: Option<Arg<DurationArg>>,
    pub(crate) when_ok: Option<Arg<Expr>>,
    pub(crate) on_giveup: Option<Arg<Expr>>,
    /// `fallback = F`: the call's result when it gives up with an error.
    pub(crate) fallback: Option<Arg<Expr>>,
    pub(crate) timeout: Option<Arg<DurationArg>>,
    pub(crate) retry_after_max: Option<Arg<DurationArg>>,
    /// `stop_at_delay = D`: give up instead of a sleep whose delay (before
    /// jitter) would reach D.
    pub(crate) stop_at_delay: Option<Arg<DurationArg>>,
    /// `on_deadline = "last_try"` (true) or `"give_up"` (false).
    pub(crate) on_deadline: Option<Arg<bool>>,
    /// `context = ctx`: the name bound in the body.
    pub(crate) context: Option<Arg<Ident>>,
    /// `context = mut ctx`: the binding's `mut`.
    pub(crate) context_mut: Option<Token![mut]>,
    /// `clone(a, b)`: the by-value parameters each attempt clones.
    pub(crate) clone: Option<Arg<Vec<Ident>>>,
    /// `preset = "external_api"`: its row of the schedule language's `PRESETS`.
    pub(crate) preset: Option<Arg<backoff_schedule::macro_support::Preset>>,
    /// `chaos = CHAOS`: a `static` `Chaos<E>` each attempt draws from.
    pub(crate) chaos: Option<Arg<Expr>>,
    /// `reset_after = D`: an attempt that ran at least D before it failed
    /// starts the schedule over.
    pub(crate) reset_after: Option<Arg<DurationArg>>,
    /// `on_success = F`: called once with an accepted `Ok` value.
    pub(crate) on_success: Option<Arg<Expr>>,
    /// `cancel = TOKEN`: a `control::Cancel` that ends the sleeps.
    pub(crate) cancel: Option<Arg<Expr>>,
    /// `on(PATTERN, ..)`: a schedule per kind of failure, in the order
    /// written (each arm may be given any number of times).
    pub(crate) on: Vec<OnArm>,
    /// Arguments the attribute meant to give but that did not parse, and
    /// the names that unknown arguments were likely meant to be: a check
    /// that asks for a missing argument skips these, so one mistake is not
    /// reported twice.
    pub(crate) broken: Vec<&'static str>,
}

impl<T> Arg<T> {
    /// The same argument, its value made by `f` from the value and its span.
    fn map<U>(self, f: impl FnOnce(T, Span) -> U) -> Arg<U> {
        let value = f(self.value, self.span);
        Arg {
            key: self.key,
            span: self.span,
            value,
        }
    }
}

/// `hedge`'s value: when the next attempt starts while the others run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Hedge {
    /// A fixed delay after the previous attempt started.
    After(core::time::Duration),
    /// The function's latency at this percentile, in thousandths
    /// (`"p95"` is 950, `"p99.9"` 999), learned as it runs.
    Percentile(u16),
}

/// `throttled(STRATEGY, attempts = N)`.
pub(crate) struct Throttled {
    pub(crate) strategy: StrategyArg,
    pub(crate) attempts: Option<Arg<Attempts>>,
}

impl RetryArgs {
    /// Whether something may refuse an attempt before it starts (`circuit`,
    /// `throttle`): the retry state is then built before the first attempt.
    pub(crate) fn gates_attempts(&self) -> bool {
        self.circuit.is_some() || self.throttle.is_some()
    }

    /// Parses the attribute's arguments, recording every problem in `errors`
    /// and keeping whatever parsed: the schedule language's crate reads
    /// them from their text (the schedule, `preset`, the durations, and
    /// every message about an argument's name), handing back the others
    /// (`other`) to be read here from their tokens.
    pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> RetryArgs {
        let mut args = RetryArgs::default();
        let text = Rc::new(Text::of(&tokens));
        let mut other = |found: &mut Vec<backoff_schedule::Error>, at: usize| {
            for e in found.drain(..) {
                errors.push(text.error(&e));
            }
            let (first, trees) = text.trees_from(at);
            let (given, mut left) = (trees.clone().into_iter().count(), 0);
            let parser = |input: ParseStream<'_>| {
                let result = args.parse_other(input);
                left = input.parse::<TokenStream>()?.into_iter().count();
                Ok(result)
            };
            let result = parser.parse2(trees).and_then(|r| r);
            let ok = result.map_err(|e| errors.push(e)).is_ok();
            (ok, text.offset(first + given.saturating_sub(left).max(1)))
        };
        let (parsed, found) = backoff_schedule::attribute::arguments(&text.text, &mut other);
        for e in &found {
            errors.push(text.error(e));
        }
        if let Some(mut parsed) = parsed {
            if args.on.is_empty() && args.policy.is_none() && args.hedge.is_none() {
                // (Beside those, `valid` refuses `preset`.)
                parsed.fill_preset();
            }
            args.take(parsed, &text);
        }
        args
    }

    /// The schedule language's arguments, each on its tokens.
    fn take(&mut self, parsed: Parsed, text: &Rc<Text>) {
        let duration =
            |d: Spanned<Duration>| text.arg(d).map(|value, span| DurationArg { value, span });
        self.strategy = parsed.strategy.map(|s| StrategyArg {
            span: text.span(s.span),
            schedule: Box::new(s),
            text: Rc::clone(text),
        });
        self.attempts = parsed.attempts.map(|a| text.arg(a));
        self.jitter = parsed.jitter.map(|j| {
            let tokens = text.tokens(j.span);
            let custom = JitterKind::Custom(Custom(tokens));
            text.arg(j).map(|j, _| JitterKind::of(j).unwrap_or(custom))
        });
        self.on_deadline = parsed.on_deadline.map(|d| text.arg(d));
        self.preset = parsed.preset.map(|p| text.arg(p));
        self.max_elapsed = parsed.max_elapsed.map(duration);
        self.stop_at_delay = parsed.stop_at_delay.map(duration);
        self.retry_after_max = parsed.retry_after_max.map(duration);
        self.timeout = parsed.timeout.map(duration);
        self.attempt_timeout = parsed.attempt_timeout.map(duration);
        self.reset_after = parsed.reset_after.map(duration);
        self.broken = parsed.broken;
    }

    /// One of the attribute's own arguments (not the schedule's); the
    /// schedule language's crate reported a second one.
    fn parse_other(&mut self, input: ParseStream<'_>) -> syn::Result<()> {
        if input.peek(Token![crate]) {
            return self.parse_crate(input);
        }
        let key = input.call(Ident::parse_any)?;
        // `r#when` is the identifier `when`.
        let name = key.unraw().to_string();
        match name.as_str() {
            "throttled" => {
                let value = parse_throttled(&key, input)?;
                set(&mut self.throttled, arg(key.span(), key.span(), value));
            }
            "hedge" => {
                eq(input, &key, "hedge = \"20ms\"")?;
                let (value, span) = parse_hedge(input)?;
                set(&mut self.hedge, arg(key.span(), span, value));
            }
            "on" => self.on.push(kinds::parse_on(&key, input)?),
            "context" => {
                eq(input, &key, "context = ctx")?;
                // `mut ctx`, as rustc suggests for a body that assigns to it.
                let mutability: Option<Token![mut]> = input.parse()?;
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
                if self.context.is_none() {
                    self.context = Some(arg(key.span(), ident.span(), ident));
                    self.context_mut = mutability;
                }
            }
            "clone" => {
                let names = parse_clone(&key, input)?;
                set(&mut self.clone, arg(key.span(), key.span(), names));
            }
            _ => self.parse_expression(&key, &name, input)?,
        }
        Ok(())
    }

    /// `crate = "path"`.
    fn parse_crate(&mut self, input: ParseStream<'_>) -> syn::Result<()> {
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
        set(&mut self.krate, arg(key.span, lit.span(), path));
        Ok(())
    }

    /// A callable (`when`, `when_ok`, `on_retry`, `on_giveup`), a path
    /// (`sleep`) or an expression (`policy`, `budget`, `circuit`,
    /// `throttle`, `chaos`).
    fn parse_expression(
        &mut self,
        key: &Ident,
        name: &str,
        input: ParseStream<'_>,
    ) -> syn::Result<()> {
        let example = match name {
            "when" => "when = is_transient",
            "when_ok" => "when_ok = is_unavailable",
            "on_retry" => "on_retry = log_retry",
            "on_hedge" => "on_hedge = log_hedge",
            "on_giveup" => "on_giveup = log_giveup",
            "on_success" => "on_success = log_success",
            "fallback" => "fallback = cached_page",
            "sleep" => "sleep = tokio::time::sleep",
            "budget" => "budget = RETRY_BUDGET",
            "circuit" => "circuit = BREAKER",
            "throttle" => "throttle = THROTTLE",
            "chaos" => "chaos = CHAOS",
            "cancel" => "cancel = token",
            _ => "policy = POLICY",
        };
        eq(input, key, example)?;
        // (A lone name, the common `when = is_transient`, is a path: built
        // here, without the expression parser.)
        let lone_name = input.peek(Ident) && {
            let fork = input.fork();
            fork.parse::<Ident>().is_ok() && (fork.is_empty() || fork.peek(Token![,]))
        };
        let expr: Expr = if lone_name {
            Expr::Path(syn::ExprPath {
                attrs: Vec::new(),
                qself: None,
                path: input.parse::<Ident>()?.into(),
            })
        } else {
            input.parse()?
        };
        // The caller's tokens, not the invisible group a
        // `macro_rules!` may have put around them.
        let span = ungrouped(&expr).span();
        match name {
            "when" | "when_ok" | "on_retry" | "on_hedge" | "on_giveup" | "fallback"
            | "on_success" => {
                check_callable(name, &expr)?;
            }
            "sleep" => check_path(&expr)?,
            _ => {}
        }
        let slot = match name {
            "when" => &mut self.when,
            "when_ok" => &mut self.when_ok,
            "on_retry" => &mut self.on_retry,
            "on_hedge" => &mut self.on_hedge,
            "on_giveup" => &mut self.on_giveup,
            "on_success" => &mut self.on_success,
            "fallback" => &mut self.fallback,
            "sleep" => &mut self.sleep,
            "budget" => &mut self.budget,
            "circuit" => &mut self.circuit,
            "throttle" => &mut self.throttle,
            "chaos" => &mut self.chaos,
            "cancel" => &mut self.cancel,
            _ => &mut self.policy,
        };
        set(slot, arg(key.span(), span, expr));
        Ok(())
    }
}

const fn arg<T>(key: Span, span: Span, value: T) -> Arg<T> {
    Arg { key, span, value }
}

/// Stores an argument (a second one of the same name is the schedule
/// language's crate's error).
fn set<T>(slot: &mut Option<Arg<T>>, value: Arg<T>) {
    slot.get_or_insert(value);
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
