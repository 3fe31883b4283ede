//! `on(PATTERN, ..)`: a schedule per kind of failure. Each arm maps a
//! pattern over `when`'s value to a strategy with its own `attempts` (and
//! `jitter`), to `stop`, or to `after = EXPR`.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Expr, Ident, Pat, Token};

use super::compose::parse_strategy;
use super::literal::{parse_attempts, parse_jitter};
use super::names::{JitterKind, OTHER_ARGUMENTS, StrategyKind};
use super::strategy::StrategyArg;
use super::syntax::{eq, in_parens};
use super::{Arg, Attempts, arg};

/// What each `on(..)` arm may say after its pattern.
const ARM_NAMES: [&str; 4] = ["stop", "after", "attempts", "jitter"];

const EXAMPLE: &str = "`on(Failure::Transient, exponential(base = \"100ms\"), attempts = 5)`";

/// One `on(PATTERN, ..)` arm.
pub(crate) struct OnArm {
    /// The `on` keyword.
    pub(crate) key: Span,
    pub(crate) pat: Pat,
    /// The pattern's text, `Failure::Throttled`: the kind's name.
    pub(crate) text: String,
    pub(crate) action: OnAction,
}

/// What an arm does with a failure of its kind.
pub(crate) enum OnAction {
    /// Retry on this strategy, up to `attempts` failures of the kind.
    Schedule {
        strategy: StrategyArg,
        attempts: Option<Arg<Attempts>>,
        jitter: Option<Arg<JitterKind>>,
    },
    /// Give up at once (`stop`).
    Stop,
    /// Wait exactly what the expression gives (`after = EXPR`).
    After(Expr),
}

/// `on(PATTERN, STRATEGY [, attempts = n] [, jitter = ..])`,
/// `on(PATTERN, stop)`, `on(PATTERN, after = EXPR)`.
pub(super) fn parse_on(key: &Ident, input: ParseStream<'_>) -> syn::Result<OnArm> {
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            key.span(),
            format!("`on` takes a pattern and its schedule in parentheses, as in {EXAMPLE}"),
        ));
    }
    in_parens(input, |content| parse_arm(key, content))
}

fn parse_arm(key: &Ident, content: ParseStream<'_>) -> syn::Result<OnArm> {
    if content.is_empty() {
        return Err(syn::Error::new(
            key.span(),
            format!("`on(..)` takes a pattern and its schedule, as in {EXAMPLE}"),
        ));
    }
    let pat = Pat::parse_multi_with_leading_vert(content).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("expected a pattern over `when`'s value, as in {EXAMPLE}"),
        )
    })?;
    if content.peek(Token![if]) {
        return Err(syn::Error::new(
            content.span(),
            "an `on(..)` arm takes a pattern without an `if` guard: the arms are matched without guards, so that a variant left out is an error; decide in `when` instead, returning a variant of its own for this case",
        ));
    }
    if content.parse::<Option<Token![,]>>()?.is_none() || content.is_empty() {
        return Err(syn::Error::new_spanned(
            &pat,
            format!(
                "`on(..)` needs a schedule after the pattern: a strategy, `stop` or `after = EXPR`, as in {EXAMPLE}"
            ),
        ));
    }
    let name = content.call(Ident::parse_any)?;
    let word = name.unraw().to_string();
    let mut action = match word.as_str() {
        "stop" => OnAction::Stop,
        "after" => {
            eq(content, &name, "after = d")?;
            OnAction::After(content.parse()?)
        }
        _ => match StrategyKind::from_name(&word) {
            Some(_) => OnAction::Schedule {
                strategy: parse_strategy(&name, content)?,
                attempts: None,
                jitter: None,
            },
            None => return Err(unknown_in_arm(&name)),
        },
    };
    while content.parse::<Option<Token![,]>>()?.is_some() && !content.is_empty() {
        let name = content.call(Ident::parse_any)?;
        parse_setting(&name, content, &mut action)?;
    }
    if !content.is_empty() {
        return Err(content.error(format!("expected `,` here, as in {EXAMPLE}")));
    }
    Ok(OnArm {
        key: key.span(),
        text: pattern_text(&pat),
        pat,
        action,
    })
}

/// `attempts = n` or `jitter = ..` after an arm's strategy.
fn parse_setting(name: &Ident, content: ParseStream<'_>, action: &mut OnAction) -> syn::Result<()> {
    let word = name.unraw().to_string();
    let (attempts, jitter) = match action {
        OnAction::Schedule {
            attempts, jitter, ..
        } => (attempts, jitter),
        OnAction::Stop | OnAction::After(_) if word == "attempts" || word == "jitter" => {
            let (what, does) = match action {
                OnAction::Stop => ("stop", "gives up at once"),
                _ => ("after", "waits exactly the duration it is given"),
            };
            return Err(syn::Error::new(
                name.span(),
                format!("`{word}` has no effect beside `{what}`, which {does}; remove `{word}`"),
            ));
        }
        OnAction::Stop | OnAction::After(_) => return Err(unknown_in_arm(name)),
    };
    if word == "stop" || word == "after" {
        return Err(syn::Error::new(
            name.span(),
            format!(
                "an `on(..)` arm takes one action, and this one has a strategy already; `{word}` would replace it: keep the strategy or `{word}`"
            ),
        ));
    }
    let duplicate = |slot_given: bool| {
        slot_given.then(|| {
            syn::Error::new(
                name.span(),
                format!("duplicate `{word}` in this `on(..)` arm; keep one"),
            )
        })
    };
    match word.as_str() {
        "attempts" => {
            if let Some(e) = duplicate(attempts.is_some()) {
                return Err(e);
            }
            eq(content, name, "attempts = 5")?;
            let (value, span) = parse_attempts(content, false)?;
            *attempts = Some(arg(name.span(), span, value));
        }
        "jitter" => {
            if let Some(e) = duplicate(jitter.is_some()) {
                return Err(e);
            }
            eq(content, name, "jitter = \"full\"")?;
            let (value, span) = parse_jitter(content)?;
            *jitter = Some(arg(name.span(), span, value));
        }
        _ => return Err(unknown_in_arm(name)),
    }
    Ok(())
}

/// A name an `on(..)` arm does not take.
fn unknown_in_arm(name: &Ident) -> syn::Error {
    let mut known: Vec<&str> = StrategyKind::NAMES.to_vec();
    known.extend(ARM_NAMES);
    let word = name.unraw().to_string();
    if OTHER_ARGUMENTS.contains(&word.as_str()) {
        let applies = match word.as_str() {
            "stop_at_delay" => ", where it applies to every arm's schedule",
            "max_elapsed" | "on_deadline" | "timeout" => ", where it bounds the whole call",
            _ => "",
        };
        return syn::Error::new(
            name.span(),
            format!(
                "`{word}` is not a setting of one `on(..)` arm; an arm takes a strategy with `attempts` and `jitter`, `stop`, or `after = EXPR`: write `{word}` beside the `on(..)` arms{applies}"
            ),
        );
    }
    let message = match crate::errors::closest(&word, &known) {
        Some(best) => format!("unknown name `{word}` in `on(..)`; did you mean `{best}`?"),
        None => format!(
            "unknown name `{word}` in `on(..)`; an arm takes a strategy with `attempts` and `jitter`, `stop`, or `after = EXPR`, as in {EXAMPLE}"
        ),
    };
    syn::Error::new(name.span(), message)
}

/// The pattern as the user wrote it, without the spaces a token stream
/// puts between tokens: `Failure::RetryAfter(d)`.
fn pattern_text(pat: &Pat) -> String {
    let mut text = String::new();
    write_tokens(pat.to_token_stream(), &mut text);
    text
}

fn write_tokens(tokens: TokenStream, out: &mut String) {
    use proc_macro2::{Delimiter, TokenTree};
    let mut previous_word = false;
    for tree in tokens {
        match tree {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => (" { ", " }"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::None => ("", ""),
                };
                out.push_str(open);
                write_tokens(g.stream(), out);
                out.push_str(close);
                previous_word = false;
            }
            TokenTree::Punct(p) => {
                match p.as_char() {
                    ',' => out.push_str(", "),
                    '|' => out.push_str(" | "),
                    '@' => out.push_str(" @ "),
                    // A field's `:`, not one of a path's `::`.
                    ':' if p.spacing() == proc_macro2::Spacing::Alone && !out.ends_with(':') => {
                        out.push_str(": ");
                    }
                    '=' if out.ends_with('.') => out.push('='),
                    c => out.push(c),
                }
                previous_word = false;
            }
            TokenTree::Ident(i) => {
                if previous_word {
                    out.push(' ');
                }
                out.push_str(&i.to_string());
                previous_word = true;
            }
            TokenTree::Literal(l) => {
                if previous_word {
                    out.push(' ');
                }
                out.push_str(&l.to_string());
                previous_word = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::RetryArgs;
    use super::*;
    use crate::errors::Errors;

    fn arms(args: &str) -> (Vec<OnArm>, Vec<String>) {
        let mut errors = Errors::default();
        let parsed = RetryArgs::parse(args.parse().unwrap(), &mut errors);
        let messages = match errors.finish() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        };
        (parsed.on, messages)
    }

    /// A kind's name is its pattern as written, whatever the token
    /// stream's spacing.
    #[test]
    fn a_kinds_name_is_its_pattern_as_written() {
        let (on, errors) = arms(
            "when = c, on(Failure :: RetryAfter ( d ), after = d), on(Failure::A | Failure::B, stop), \
             on(Some(_), stop), on(E::S { code: 503, .. }, immediate), on(_, stop), on(&[1, 2], stop), \
             on(n @ 1..=5, stop)",
        );
        assert_eq!(errors, Vec::<String>::new());
        let names: Vec<&str> = on.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(
            names,
            [
                "Failure::RetryAfter(d)",
                "Failure::A | Failure::B",
                "Some(_)",
                "E::S { code: 503, .. }",
                "_",
                "&[1, 2]",
                "n @ 1..=5",
            ]
        );
    }

    #[test]
    fn each_arm_is_a_schedule_stop_or_after() {
        let (on, errors) = arms(
            "when = c, on(A, exponential(base = \"1s\"), attempts = 5, jitter = \"none\"), on(B, stop), on(C(d), after = d * 2)",
        );
        assert_eq!(errors, Vec::<String>::new());
        match &on[0].action {
            OnAction::Schedule {
                strategy,
                attempts,
                jitter,
            } => {
                assert_eq!(strategy.kind, StrategyKind::Exponential);
                assert!(matches!(
                    attempts.as_ref().map(|a| a.value),
                    Some(Attempts::Limited(5))
                ));
                assert!(matches!(
                    jitter.as_ref().map(|j| &j.value),
                    Some(JitterKind::None)
                ));
            }
            _ => panic!("a schedule"),
        }
        assert!(matches!(on[1].action, OnAction::Stop));
        assert!(matches!(on[2].action, OnAction::After(_)));
    }

    #[test]
    fn mistakes_in_an_arm_are_one_error_each() {
        for (args, expect) in [
            ("when = c, on(A)", "needs a schedule after the pattern"),
            ("when = c, on", "takes a pattern and its schedule"),
            (
                "when = c, on(A, stop, jitter = \"full\")",
                "`jitter` has no effect beside `stop`",
            ),
            (
                "when = c, on(A, after = d, attempts = 2)",
                "`attempts` has no effect beside `after`",
            ),
            (
                "when = c, on(A, immediate, attempts = 2, attempts = 3)",
                "duplicate `attempts`",
            ),
            ("when = c, on(A, imediate)", "did you mean `immediate`?"),
            (
                "when = c, on(A, immediate, tries = 3)",
                "unknown name `tries` in `on(..)`",
            ),
            ("when = c, on(A, immediate stop)", "expected `,`"),
        ] {
            let (_, errors) = arms(args);
            assert_eq!(errors.len(), 1, "{args}: {errors:?}");
            assert!(errors[0].contains(expect), "{args}: {errors:?}");
        }
    }
}
