//! The messages for unknown and misplaced arguments: "did you mean", where a
//! name belongs, and the values repeated in suggestions.

use proc_macro2::{TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Expr, Ident, Lit};

use crate::duration;

use super::defaults;
use super::names::{JITTER_NAMES, StrategyKind, arguments, equivalent, param_home};
use super::syntax::{optional_value, shown_value, ungrouped};

/// A literal where an argument name belongs: `#[retry(5)]`, `#[retry("1s")]`.
pub(super) fn positional_literal(lit: &Lit) -> syn::Error {
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

/// An unknown argument: a strategy parameter beside the strategy, another
/// library's name, or a typo. Returns the error and the argument it was
/// probably meant to be.
pub(super) fn unknown_argument(
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

/// An unknown name, with "did you mean" when one is close.
pub(super) fn unknown(key: &Ident, what: &str, known: &[&str]) -> syn::Error {
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

pub(super) fn list(names: &[&str]) -> String {
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

/// A value that fits `param`: its default.
pub(super) fn param_example(param: &str) -> String {
    match param {
        "factor" => "2".to_owned(),
        "max" => defaults::literal(defaults::MAX),
        "delay" => defaults::literal(defaults::DELAY),
        _ => defaults::literal(defaults::BASE),
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
    let value = shown
        .filter(fits)
        .map_or_else(|| param_example(param), str::to_owned);
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

/// The first strategy at the top level of the attribute, found before
/// parsing, for the messages about a strategy parameter written beside it.
#[derive(Default)]
pub(super) struct Scan {
    strategy: Option<StrategyKind>,
    /// Whether that strategy already has parameters in parentheses.
    with_params: bool,
}

impl Scan {
    pub(super) fn new(tokens: &TokenStream) -> Scan {
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
