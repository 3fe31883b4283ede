//! The schedule language of `backoff-runtime`: the part of the `#[retry]`
//! attribute's grammar that describes a schedule, as text. Depend on
//! `backoff-runtime` instead: its `Policy::parse` reads a text with this
//! crate into a policy, and its `#[retry]` attribute takes the same
//! arguments and reads its strategies and values with this crate.
//!
//! A schedule is a comma-separated list of arguments, each at most once:
//!
//! - a strategy, composed or not: `exponential(base = "100ms", factor = 2,
//!   max = "10s")`, `linear(..)`, `fibonacci(..)`, `decorrelated(..)`,
//!   `constant("1s")`, `immediate`, `sidekiq(unit = "1s", max = "1h")`,
//!   `buckets(..)`, `chain(A(.., times = n), B)`, `steps("1s", "5s")`,
//!   `shorter(A, B)`, `longer(A, B)`, `sum(A, B)`;
//! - `attempts = 5` (calls, the first included) or `attempts = unlimited`;
//! - `jitter = "full"`, `"equal"`, `"none"`, `"spread"`,
//!   `scattered(0.25)` or `range(0.5, 1.5)`;
//! - `max_elapsed = "30s"`, `stop_at_delay = "10s"`,
//!   `on_deadline = "last_try"` (or `"give_up"`), `retry_after_max = "1m"`.
//!
//! Durations are strings of a number and a unit (`h`, `m`, `s`, `ms`,
//! `us`, `ns`): `"250ms"`, `"1.5s"`, `"1m30s"`.
//!
//! [`parse`] checks everything the attribute checks when the code compiles
//! and reports every mistake at once, each with the attribute's message
//! and the byte range of the offending text:
//!
//! ```
//! let schedule = backoff_schedule::parse(r#"exponential(base = "1s", max = "1m"), attempts = 5"#).unwrap();
//! assert_eq!(schedule.attempts, Some(backoff_schedule::Attempts::Limited(5)));
//!
//! let errors = backoff_schedule::parse("exponential, atempts = 5").unwrap_err();
//! assert_eq!(errors.to_string(), "unknown argument `atempts`; did you mean `attempts`?");
//! assert_eq!(errors.errors()[0].span(), backoff_schedule::Span::new(13, 20));
//! ```
//!
//! # Limits
//!
//! Any text, of any length, is an `Ok` or an `Err`, never a panic: groups
//! nest at most [`MAX_DEPTH`] levels, and the time a text takes is linear
//! in its length.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

use core::fmt;
use core::time::Duration;

mod check;
pub mod duration;
mod eval;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz;
mod lex;
mod names;
mod parse;
mod value;

pub use lex::MAX_DEPTH;
pub use names::{JitterKind, StrategyKind};
#[doc(hidden)]
pub use value::attribute;

/// What the `#[retry]` attribute reads through this crate besides
/// [`attribute`]'s values: the names tables, the defaults, the evaluator
/// of a strategy's delays, and the checks of a strategy and of a value.
/// Not a stable API.
#[doc(hidden)]
pub mod macro_support {
    pub use crate::check::{BASE, UNIT, base, check_strategy_in, first_end, value_checks};
    pub use crate::closest;
    pub use crate::eval::{StopAt, central, max, stop_at, stop_rule};
    pub use crate::names::{
        JITTERS_OR_STATIC, OTHER_ARGUMENTS, PRESETS, Preset, SCHEDULE_ARGUMENTS, arguments,
        combinator_home,
    };
}

/// The default attempt limit (the runtime's `DEFAULT_ATTEMPTS`).
pub const DEFAULT_ATTEMPTS: u64 = 3;

/// A byte range of the text parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The bytes `start..end`.
    ///
    /// ```
    /// let span = backoff_schedule::Span::new(2, 5);
    /// assert_eq!(&"a strategy"[span.start..span.end], "str");
    /// ```
    pub const fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// From `self`'s start to `other`'s end.
    pub(crate) const fn to(self, other: Span) -> Span {
        Span::new(self.start, other.end)
    }
}

/// A value with the span it was written at.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// The value as written.
    pub span: Span,
    /// The argument's or parameter's name.
    pub key: Span,
}

/// `attempts = 5` or `attempts = unlimited`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attempts {
    /// At most this many calls, the first included.
    Limited(u64),
    /// No limit.
    Unlimited,
}

/// A strategy as written, composed or not; what is not written keeps its
/// default.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Strategy {
    /// Which strategy.
    pub kind: StrategyKind,
    /// Its name.
    pub span: Span,
    /// `base`, `constant`'s delay, or `sidekiq`'s and `buckets`' `unit`.
    pub base: Option<Spanned<Duration>>,
    /// `exponential`'s `factor`.
    pub factor: Option<Spanned<f64>>,
    /// `max`.
    pub max: Option<Spanned<Duration>>,
    /// Whether it is a stage of another form.
    pub nested: bool,
    /// A stage's `times = n`.
    pub times: Option<Spanned<u64>>,
    /// A stage's `for = D`: it ends at the first failure once D has passed
    /// since it began.
    pub lasting: Option<Spanned<Duration>>,
    /// The stages of `chain`, `shorter`, `longer` and `sum`.
    pub stages: Vec<Strategy>,
    /// The delays of `steps`.
    pub steps: Vec<Spanned<Duration>>,
}

/// A parsed and checked schedule.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Schedule {
    /// The strategy; `None`: the default exponential.
    pub strategy: Option<Strategy>,
    /// `attempts`.
    pub attempts: Option<Attempts>,
    /// `jitter`; `None`: the strategy's default ([`Schedule::jitter`]).
    pub jitter: Option<JitterKind>,
    /// `max_elapsed`.
    pub max_elapsed: Option<Duration>,
    /// `stop_at_delay`.
    pub stop_at_delay: Option<Duration>,
    /// `on_deadline`: `Some(true)` for `"last_try"`.
    pub on_deadline: Option<bool>,
    /// `retry_after_max`.
    pub retry_after_max: Option<Duration>,
}

impl Schedule {
    /// The jitter: the one given, else the strategy's default (none for
    /// `decorrelated`, `immediate`, `sidekiq`, `buckets` and `steps`, and
    /// for a composed schedule whose every leaf has none; full otherwise).
    ///
    /// ```
    /// use backoff_schedule::{JitterKind, parse};
    ///
    /// assert_eq!(parse(r#"steps("1s", "5s")"#).unwrap().jitter(), JitterKind::None);
    /// assert_eq!(parse("linear").unwrap().jitter(), JitterKind::Full);
    /// ```
    pub fn jitter(&self) -> JitterKind {
        match (&self.jitter, &self.strategy) {
            (Some(j), _) => j.clone(),
            (None, Some(s)) => s.default_jitter(),
            (None, None) => JitterKind::Full,
        }
    }

    /// The attempt limit and the delay of a run-time `stop_at_delay`, as
    /// the attribute builds them: for a schedule without randomness, the
    /// rule becomes an attempt count (the smaller of it and `attempts`);
    /// for a random one, it stays a run-time check beside `attempts`,
    /// unlimited unless given.
    ///
    /// ```
    /// use backoff_schedule::{Attempts, parse};
    /// use std::time::Duration;
    ///
    /// let s = parse(r#"exponential(base = "1s", max = "1m"), stop_at_delay = "10s""#).unwrap();
    /// assert_eq!(s.stop_rule(), (Some(Attempts::Limited(5)), None));
    /// let s = parse(r#"decorrelated(base = "1s", max = "1m"), stop_at_delay = "10s""#).unwrap();
    /// assert_eq!(s.stop_rule(), (Some(Attempts::Unlimited), Some(Duration::from_secs(10))));
    /// ```
    pub fn stop_rule(&self) -> (Option<Attempts>, Option<Duration>) {
        eval::stop_rule(self.strategy.as_ref(), self.attempts, self.stop_at_delay)
    }
}

impl Strategy {
    /// `kind` with nothing given, written at `span`.
    pub(crate) fn new(kind: StrategyKind, span: Span, nested: bool) -> Strategy {
        Strategy {
            kind,
            span,
            base: None,
            factor: None,
            max: None,
            nested,
            times: None,
            lasting: None,
            stages: Vec::new(),
            steps: Vec::new(),
        }
    }

    /// The strategy when none is given.
    pub(crate) fn default_exponential() -> Strategy {
        Strategy::new(StrategyKind::Exponential, Span::new(0, 0), false)
    }

    /// The jitter this strategy has when `jitter` is not given: its kind's;
    /// for a composed one, none when every leaf has none (random by
    /// itself, or never waits), else full.
    pub fn default_jitter(&self) -> JitterKind {
        if self.stages.is_empty() {
            check::default_jitter(self.kind)
        } else if self
            .stages
            .iter()
            .all(|s| matches!(s.default_jitter(), JitterKind::None))
        {
            JitterKind::None
        } else {
            JitterKind::Full
        }
    }

    /// The first delay when `base` is not given: `constant`'s delay (1 s),
    /// `sidekiq`'s and `buckets`' unit (1 s), else 100 ms.
    pub const fn default_base(kind: StrategyKind) -> Duration {
        check::base(kind)
    }
}

/// A mistake in a schedule text: the attribute's message, and the bytes
/// it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    span: Span,
    message: String,
}

impl Error {
    pub(crate) fn new(span: Span, message: impl Into<String>) -> Error {
        Error {
            span,
            message: message.into(),
        }
    }

    /// The bytes of the text the mistake is about.
    pub fn span(&self) -> Span {
        self.span
    }

    /// The message, in the attribute's words.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Every mistake of a text, in the order the attribute reports them (at
/// least one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Errors(Vec<Error>);

impl Errors {
    /// The mistakes.
    pub fn errors(&self) -> &[Error] {
        &self.0
    }
}

/// The messages, one a line.
impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            fmt::Display::fmt(e, f)?;
        }
        Ok(())
    }
}

impl std::error::Error for Errors {}

/// Parses and checks a schedule text: the [`Schedule`], or every mistake.
///
/// ```
/// use backoff_schedule::{StrategyKind, parse};
///
/// let s = parse(r#"chain(constant("1s", times = 3), constant("1m")), attempts = 10"#).unwrap();
/// assert_eq!(s.strategy.unwrap().kind, StrategyKind::Chain);
/// assert!(parse("").is_ok()); // the defaults
/// ```
pub fn parse(text: &str) -> Result<Schedule, Errors> {
    let mut errors = Vec::new();
    let parsed = parse::parse(text, &mut errors, None);
    if let Some(parsed) = &parsed {
        check::check(parsed, &mut errors);
    }
    match parsed {
        Some(parsed) if errors.is_empty() => Ok(parsed.into_schedule()),
        _ => Err(Errors(errors)),
    }
}

/// The known name closest to `name`, if it is close enough to be a typo.
#[doc(hidden)]
pub fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .filter(|k| name.len().abs_diff(k.len()) <= threshold(k))
        .map(|k| (strsim::osa_distance(name, k), *k))
        // (Never the word written: it is known here, but not in this place.)
        .filter(|(d, k)| *d > 0 && *d <= threshold(k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Whether `name` is a likely typo of `known`.
pub(crate) fn close(name: &str, known: &str) -> bool {
    name.len().abs_diff(known.len()) <= threshold(known)
        && strsim::osa_distance(name, known) <= threshold(known)
}

/// Edits allowed: a third of the name's length, at least one (rustc's
/// rule for "a similar name exists").
fn threshold(known: &str) -> usize {
    (known.chars().count() / 3).max(1)
}
