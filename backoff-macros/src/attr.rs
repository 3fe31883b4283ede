//! Parsing `#[retry(...)]` arguments into a typed [`RetryArgs`], every value
//! kept with its span. Parsing reports what is malformed in one argument and
//! carries on with the next, so that all mistakes surface together; checks
//! that involve several arguments live in `valid.rs`.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, LitStr, Token};

use crate::errors::Errors;

pub(crate) mod compose;
pub(crate) mod defaults;
mod kinds;
mod literal;
mod names;
pub(crate) mod schedule;
mod strategy;
mod suggest;
mod syntax;
#[cfg(test)]
mod tests;
mod text;
mod values;

use compose::parse_strategy;
pub(crate) use kinds::{OnAction, OnArm};
pub(crate) use literal::DurationArg;
use literal::{Slot, parse_attempts, parse_duration, parse_jitter};
pub(crate) use names::{JitterKind, StrategyKind, arguments};

pub(crate) use strategy::StrategyArg;
use suggest::{Scan, list, positional_literal, unknown_argument};
pub(crate) use syntax::ungrouped;
use syntax::{comma_separated, eq, span_range};
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
    /// `preset = "external_api"`: its row of `defaults::PRESETS`.
    pub(crate) preset: Option<Arg<defaults::Preset>>,
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
        args.fill_preset();
        args
    }

    /// `preset`'s strategy and `attempts` where none is written (its full
    /// jitter is the exponential's default); beside `on(..)`, `policy` or
    /// `hedge`, nothing: `valid` refuses it there.
    fn fill_preset(&mut self) {
        let Some(preset) = &self.preset else { return };
        if !self.on.is_empty() || self.policy.is_some() || self.hedge.is_some() {
            return;
        }
        let (_, base, max, attempts) = preset.value;
        if self.strategy.is_none() {
            let mut s = StrategyArg::new(StrategyKind::Exponential, preset.span);
            let ms = |ms| {
                Some(backoff_schedule::macro_support::spanned(
                    core::time::Duration::from_millis(ms),
                ))
            };
            (s.schedule.base, s.schedule.max) = (ms(base), ms(max));
            self.strategy = Some(s);
        }
        if self.attempts.is_none() {
            self.attempts = Some(arg(preset.key, preset.span, Attempts::Limited(attempts)));
        }
    }

    /// One argument; `end` is the span of its last token.
    fn parse_one(&mut self, input: ParseStream<'_>, scan: &Scan, end: Span) -> syn::Result<()> {
        if input.peek(Token![,]) {
            // Left for the caller's comma handling, so what follows the
            // extra comma is still parsed.
            return Err(syn::Error::new(input.span(), "extra `,`; remove it"));
        }
        if input.peek(Token![crate]) {
            return self.parse_crate(input, end);
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
        if StrategyKind::from_name(&name).is_some() {
            let strategy = parse_strategy(&key, input)?;
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
                let value = parse_attempts(input, true)?;
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
            "throttled" => {
                let value = parse_throttled(&key, input)?;
                set(
                    &mut self.throttled,
                    "throttled",
                    arg(key.span(), key.span(), value),
                    end,
                )
            }
            "on_deadline" => self.parse_on_deadline(&key, input, end),
            "preset" => {
                eq(input, &key, "preset = \"external_api\"")?;
                let (name, span) = parse_preset(input)?;
                set(&mut self.preset, "preset", arg(key.span(), span, name), end)
            }
            "hedge" => {
                eq(input, &key, "hedge = \"20ms\"")?;
                let (value, span) = parse_hedge(input)?;
                set(&mut self.hedge, "hedge", arg(key.span(), span, value), end)
            }
            "attempt_timeout" | "timeout" | "retry_after_max" | "stop_at_delay" | "max_elapsed"
            | "reset_after" => self.parse_duration_argument(&key, &name, input, end),
            "on" => {
                self.on.push(kinds::parse_on(&key, input)?);
                Ok(())
            }
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
                set(
                    &mut self.context,
                    "context",
                    arg(key.span(), ident.span(), ident),
                    end,
                )?;
                self.context_mut = mutability;
                Ok(())
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
            "when" | "when_ok" | "on_retry" | "on_hedge" | "on_giveup" | "fallback" | "policy"
            | "sleep" | "budget" | "circuit" | "throttle" | "chaos" | "on_success" | "cancel" => {
                self.parse_expression(&key, &name, input, end)
            }
            _ if names::combinator_home(&name).is_some() => {
                Err(compose::unknown_stage(&key, &name))
            }
            _ => {
                let (error, meant) = unknown_argument(&key, input, scan);
                self.broken.extend(meant);
                Err(error)
            }
        }
    }

    /// `on_deadline = "give_up"` or `"last_try"`.
    fn parse_on_deadline(
        &mut self,
        key: &Ident,
        input: ParseStream<'_>,
        end: Span,
    ) -> syn::Result<()> {
        eq(input, key, "on_deadline = \"last_try\"")?;
        let lit: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "`on_deadline` takes `\"give_up\"` or `\"last_try\"`, as in `on_deadline = \"last_try\"`",
            )
        })?;
        let last_try = match lit.value().as_str() {
            "last_try" => true,
            "give_up" => false,
            other => {
                let message = match crate::errors::closest(other, &["give_up", "last_try"]) {
                    Some(best) => format!(
                        "unknown `on_deadline` rule `\"{other}\"`; did you mean `\"{best}\"`?"
                    ),
                    None => format!(
                        "unknown `on_deadline` rule `\"{other}\"`; expected `\"give_up\"` or `\"last_try\"`"
                    ),
                };
                return Err(syn::Error::new(lit.span(), message));
            }
        };
        set(
            &mut self.on_deadline,
            "on_deadline",
            arg(key.span(), lit.span(), last_try),
            end,
        )
    }

    /// `crate = "path"`.
    fn parse_crate(&mut self, input: ParseStream<'_>, end: Span) -> syn::Result<()> {
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
        set(
            &mut self.krate,
            "crate",
            arg(key.span, lit.span(), path),
            end,
        )
    }

    /// `attempt_timeout`, `timeout` or `retry_after_max`: a duration.
    fn parse_duration_argument(
        &mut self,
        key: &Ident,
        name: &str,
        input: ParseStream<'_>,
        end: Span,
    ) -> syn::Result<()> {
        let (example, setter) = match name {
            "retry_after_max" => (
                "\"1m\"",
                Some("Policy::exponential(..).retry_after_max({})"),
            ),
            "timeout" => ("\"30s\"", None),
            "stop_at_delay" => ("\"10s\"", Some("Policy::exponential(..).stop_at_delay({})")),
            "max_elapsed" => ("\"30s\"", Some("Policy::exponential(..).max_elapsed({})")),
            "reset_after" => ("\"1m\"", Some("Policy::exponential(..).reset_after({})")),
            _ => ("\"5s\"", None),
        };
        eq(input, key, &format!("{name} = {example}"))?;
        let d = parse_duration(input, &Slot::new(name, example, setter))?;
        let (slot, name) = match name {
            "retry_after_max" => (&mut self.retry_after_max, "retry_after_max"),
            "timeout" => (&mut self.timeout, "timeout"),
            "stop_at_delay" => (&mut self.stop_at_delay, "stop_at_delay"),
            "max_elapsed" => (&mut self.max_elapsed, "max_elapsed"),
            "reset_after" => (&mut self.reset_after, "reset_after"),
            _ => (&mut self.attempt_timeout, "attempt_timeout"),
        };
        set(slot, name, arg(key.span(), d.span, d), end)
    }

    /// A callable (`when`, `when_ok`, `on_retry`, `on_giveup`), a path
    /// (`sleep`) or an expression (`policy`, `budget`, `circuit`,
    /// `throttle`, `chaos`).
    fn parse_expression(
        &mut self,
        key: &Ident,
        name: &str,
        input: ParseStream<'_>,
        end: Span,
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
        let (slot, name) = match name {
            "when" => (&mut self.when, "when"),
            "when_ok" => (&mut self.when_ok, "when_ok"),
            "on_retry" => (&mut self.on_retry, "on_retry"),
            "on_hedge" => (&mut self.on_hedge, "on_hedge"),
            "on_giveup" => (&mut self.on_giveup, "on_giveup"),
            "on_success" => (&mut self.on_success, "on_success"),
            "fallback" => (&mut self.fallback, "fallback"),
            "sleep" => (&mut self.sleep, "sleep"),
            "budget" => (&mut self.budget, "budget"),
            "circuit" => (&mut self.circuit, "circuit"),
            "throttle" => (&mut self.throttle, "throttle"),
            "chaos" => (&mut self.chaos, "chaos"),
            "cancel" => (&mut self.cancel, "cancel"),
            _ => (&mut self.policy, "policy"),
        };
        set(slot, name, arg(key.span(), span, expr), end)
    }
}

const fn arg<T>(key: Span, span: Span, value: T) -> Arg<T> {
    Arg { key, span, value }
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

/// `preset = "external_api"`: a name of `defaults::PRESETS`.
fn parse_preset(input: ParseStream<'_>) -> syn::Result<(defaults::Preset, Span)> {
    let names = defaults::PRESETS.map(|p| p.0);
    let lit: LitStr = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("`preset` takes a name in quotes, one of {}", list(&names)),
        )
    })?;
    let text = lit.value();
    if let Some(row) = defaults::PRESETS.iter().find(|p| p.0 == text) {
        return Ok((*row, lit.span()));
    }
    // (`"EXTERNAL_API"`: the name in another case.)
    let lower = text.to_lowercase();
    let same = names.iter().find(|n| **n == lower).copied();
    let message = match same.or_else(|| crate::errors::closest(&lower, &names)) {
        Some(best) => format!("unknown preset `\"{text}\"`; did you mean `\"{best}\"`?"),
        None => format!(
            "unknown preset `\"{text}\"`; the presets are {}",
            list(&names)
        ),
    };
    Err(syn::Error::new(lit.span(), message))
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
