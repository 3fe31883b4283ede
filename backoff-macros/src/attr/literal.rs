//! Literal values: durations (parsed when the code compiles, other forms
//! translated to the literal they mean), factors, attempt limits, jitters,
//! read and checked by the schedule language's crate (`backoff-schedule`,
//! whose messages `Policy::parse` gives too) from the value's tokens.

use std::time::Duration;

use proc_macro2::Span;
use quote::ToTokens;
use syn::Expr;
use syn::parse::ParseStream;

use super::Attempts;
use super::names::{Custom, JitterKind};
use super::syntax::ungrouped;
use super::text::Text;
use backoff_schedule::attribute as values;

/// A duration literal such as `"250ms"`, parsed.
#[derive(Clone)]
pub(crate) struct DurationArg {
    pub(crate) value: Duration,
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
}

/// The next expression, its message when there is none, and its tokens
/// as text.
fn value(input: ParseStream<'_>, message: &str) -> syn::Result<(Expr, Text)> {
    let expr: Expr = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), message))?;
    let text = Text::of(ungrouped(&expr));
    Ok((expr, text))
}

/// A duration: a string literal, parsed now; other forms get the literal
/// they mean (`100` → `"100ms"`, `Duration::from_secs(2)` → `"2s"`).
pub(super) fn parse_duration(input: ParseStream<'_>, slot: &Slot) -> syn::Result<DurationArg> {
    let message = format!(
        "`{}` takes a duration string, as in `\"250ms\"`, `\"1.5s\"` or `\"1m30s\"`",
        slot.what
    );
    let (_, text) = value(input, &message)?;
    let (value, span) = values::duration(
        &text.text,
        &slot.what,
        &slot.example,
        slot.policy.as_deref(),
    )
    .map_err(|e| text.error(&e))?;
    Ok(DurationArg {
        value,
        span: text.span(span),
    })
}

/// `attempts = n`; `top_level` for the attribute's own (whose run-time
/// value `policy = ..` can give), not an arm's or `throttled(..)`'s.
pub(super) fn parse_attempts(
    input: ParseStream<'_>,
    top_level: bool,
) -> syn::Result<(Attempts, Span)> {
    let (_, text) = value(input, values::ATTEMPTS)?;
    let (value, span) = values::attempts(&text.text, top_level).map_err(|e| text.error(&e))?;
    Ok((value, text.span(span)))
}

/// `"full"`, `"equal"`, `"half"`, `"none"`, `"spread"`, `scattered(0.25)`,
/// `range(lo, hi)`, or the name of a `static` implementing `Jitterer`.
pub(super) fn parse_jitter(input: ParseStream<'_>) -> syn::Result<(JitterKind, Span)> {
    let (expr, text) = value(
        input,
        &format!(
            "expected a jitter: one of {}",
            super::names::JITTERS_OR_STATIC
        ),
    )?;
    let (value, span) = values::jitter(&text.text).map_err(|e| text.error(&e))?;
    let value = JitterKind::of(value)
        .unwrap_or_else(|| JitterKind::Custom(Custom(ungrouped(&expr).to_token_stream())));
    Ok((value, text.span(span)))
}
