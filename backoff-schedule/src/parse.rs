//! The grammar: the arguments of a schedule, strategies composed or not,
//! and the messages for what does not fit ("did you mean", where a name
//! belongs). Parsing reports what is malformed in one argument and carries
//! on with the next, so that all mistakes surface together; checks that
//! involve several arguments live in `check.rs`.

use core::time::Duration;

use crate::lex::{Tok, Tt, lex};
use crate::names::{
    JITTER_NAMES, OTHER_ARGUMENTS, PRESETS, Preset, SCHEDULE_ARGUMENTS, StrategyKind, arguments,
    combinator_home, equivalent, param_home, top_level_home,
};
use crate::value::{
    Expr, Lit, LitKind, Slot, attempts_value, duration_value, expr, factor_value, jitter_value,
    shown_value,
};
use crate::{Attempts, Error, JitterKind, Schedule, Span, Spanned, Strategy, check, duration};

/// Everything a text gave, with spans, for the checks; in an attribute,
/// also the attribute's own durations and `preset`.
#[derive(Default)]
pub struct Parsed {
    /// The strategy, composed or not.
    pub strategy: Option<Strategy>,
    /// `attempts`.
    pub attempts: Option<Spanned<Attempts>>,
    /// `jitter` (a `static`'s name only in an attribute).
    pub jitter: Option<Spanned<JitterKind>>,
    /// `max_elapsed`.
    pub max_elapsed: Option<Spanned<Duration>>,
    /// `stop_at_delay`.
    pub stop_at_delay: Option<Spanned<Duration>>,
    /// `on_deadline`: `true` for `"last_try"`.
    pub on_deadline: Option<Spanned<bool>>,
    /// `retry_after_max`.
    pub retry_after_max: Option<Spanned<Duration>>,
    /// The attribute's `timeout`.
    pub timeout: Option<Spanned<Duration>>,
    /// The attribute's `attempt_timeout`.
    pub attempt_timeout: Option<Spanned<Duration>>,
    /// The attribute's `reset_after`.
    pub reset_after: Option<Spanned<Duration>>,
    /// The attribute's `preset`: its row of `PRESETS`.
    pub preset: Option<Spanned<Preset>>,
    /// Arguments that did not parse, and the names unknown arguments were
    /// likely meant to be: a check that asks for a missing argument skips
    /// these.
    pub broken: Vec<&'static str>,
    /// The attribute's arguments its reader read (`Other`).
    others: Vec<&'static str>,
}

/// The attribute's reader of its own arguments (`when`, `on(..)`, ..):
/// given the errors so far (for it to report first) and the byte offset of
/// the argument's name, it reads the argument and says whether it was
/// well-formed and the offset where it ended.
pub type Other<'o> = dyn FnMut(&mut Vec<Error>, usize) -> (bool, usize) + 'o;

impl Parsed {
    /// `preset`'s exponential and `attempts` where none is written (its
    /// full jitter is the exponential's default), at the preset's name.
    pub fn fill_preset(&mut self) {
        let Some(preset) = &self.preset else { return };
        let (_, base, max, attempts) = preset.value;
        let at = |value| Spanned {
            value,
            span: preset.span,
            key: preset.span,
        };
        if self.strategy.is_none() {
            let mut s = Strategy::new(StrategyKind::Exponential, preset.span, false);
            s.base = Some(at(Duration::from_millis(base)));
            s.max = Some(at(Duration::from_millis(max)));
            self.strategy = Some(s);
        }
        if self.attempts.is_none() {
            self.attempts = Some(spanned(
                preset.key,
                preset.span,
                Attempts::Limited(attempts),
            ));
        }
    }

    pub(crate) fn into_schedule(self) -> Schedule {
        Schedule {
            strategy: self.strategy,
            attempts: self.attempts.map(|a| a.value),
            jitter: self.jitter.map(|a| a.value),
            max_elapsed: self.max_elapsed.map(|a| a.value),
            stop_at_delay: self.stop_at_delay.map(|a| a.value),
            on_deadline: self.on_deadline.map(|a| a.value),
            retry_after_max: self.retry_after_max.map(|a| a.value),
        }
    }
}

/// A failed item: its errors are in the sink.
pub(crate) struct Failed;

type Res<T> = Result<T, Failed>;

/// The trees of one group (or the whole text) being read.
#[derive(Clone, Copy)]
pub(crate) struct Input<'t> {
    src: &'t str,
    trees: &'t [Tt],
    pos: usize,
    /// Where the group ends: its closing delimiter, or the text's end.
    end: Span,
}

impl<'t> Input<'t> {
    fn peek(&self) -> Option<&'t Tt> {
        self.trees.get(self.pos)
    }

    fn peek2(&self) -> Option<&'t Tt> {
        self.trees.get(self.pos + 1)
    }

    fn next(&mut self) -> Option<&'t Tt> {
        let t = self.trees.get(self.pos)?;
        self.pos += 1;
        Some(t)
    }

    fn is_empty(&self) -> bool {
        self.pos >= self.trees.len()
    }

    fn peek_comma(&self) -> bool {
        self.peek().is_some_and(|t| t.is_punct(','))
    }

    /// The next tree's span, or the group's end.
    fn span(&self) -> Span {
        self.peek().map_or(self.end, |t| t.span)
    }

    /// The inside of a parenthesized group.
    fn group(&self, group: &'t Tt) -> Input<'t> {
        let inner = group.parens().unwrap_or_default();
        Input {
            src: self.src,
            trees: inner,
            pos: 0,
            end: Span::new(group.span.end - 1, group.span.end),
        }
    }

    /// The span of the last tree before the next top-level comma.
    fn item_end(&self) -> Span {
        let mut end = self.span();
        for t in &self.trees[self.pos.min(self.trees.len())..] {
            if t.is_punct(',') {
                break;
            }
            end = t.span;
        }
        end
    }

    /// Goes on from the first tree at or after byte `at`.
    fn seek(&mut self, at: usize) {
        while self.peek().is_some_and(|t| t.span.start < at) {
            self.pos += 1;
        }
    }

    fn skip_to_comma(&mut self) {
        while self.peek().is_some_and(|t| !t.is_punct(',')) {
            self.pos += 1;
        }
    }

    /// `name =` ahead (not `==`).
    fn named_value(&self) -> Option<&'t str> {
        let name = self.peek()?.ident()?;
        let eq = self.peek2()?;
        let eqeq = self
            .trees
            .get(self.pos + 2)
            .is_some_and(|t| t.is_punct('='))
            && self.trees[self.pos + 2].span.start == eq.span.end;
        (eq.is_punct('=') && !eqeq).then_some(name)
    }

    /// An expression.
    fn expr(&mut self) -> Option<Expr> {
        let (e, n) = expr(&self.trees[self.pos.min(self.trees.len())..], self.src)?;
        self.pos += n;
        Some(e)
    }

    /// `= value` after an unknown name, read for the message.
    fn optional_value(&mut self) -> Option<Expr> {
        if self.peek().is_some_and(|t| t.is_punct('='))
            && !self.peek2().is_some_and(|t| t.is_punct('='))
        {
            self.next();
            return self.expr();
        }
        None
    }
}

/// Parses `text`'s arguments, recording every problem in `errors`; `None`
/// when the text did not split into tokens. `other` reads the attribute's
/// own arguments; without it (a schedule text), they are refused.
pub(crate) fn parse(
    text: &str,
    errors: &mut Vec<Error>,
    mut other: Option<&mut Other<'_>>,
) -> Option<Parsed> {
    let trees = match lex(text) {
        Ok(trees) => trees,
        Err(e) => {
            errors.push(e);
            return None;
        }
    };
    let mut input = Input {
        src: text,
        trees: &trees,
        pos: 0,
        end: Span::new(text.len(), text.len()),
    };
    let mut parsed = Parsed::default();
    let scan = Scan::new(&trees);
    comma_separated(&mut input, errors, |input, errors, end| {
        let name = input.peek().and_then(Tt::ident).map(str::to_owned);
        let result = parsed.parse_one(input, errors, &scan, end, other.as_deref_mut());
        if result.is_err()
            && let Some(name) = name
            && let Some(known) = arguments().into_iter().find(|k| *k == name)
        {
            parsed.broken.push(known);
        }
        result
    });
    Some(parsed)
}

/// Parses `item, item, ...` with `one` (given the span of the item's last
/// token), going on after the next comma past a failed item, so that every
/// mistake is reported.
fn comma_separated<'t>(
    input: &mut Input<'t>,
    errors: &mut Vec<Error>,
    mut one: impl FnMut(&mut Input<'t>, &mut Vec<Error>, Span) -> Res<()>,
) {
    while !input.is_empty() {
        let end = input.item_end();
        if one(input, errors, end).is_err() {
            input.skip_to_comma();
        }
        if input.is_empty() {
            break;
        }
        if input.peek_comma() {
            input.next();
        } else {
            errors.push(Error::new(input.span(), "expected `,`"));
            input.skip_to_comma();
            if input.peek_comma() {
                input.next();
            }
        }
    }
}

/// Records `e` and fails.
fn fail<T>(errors: &mut Vec<Error>, e: Error) -> Res<T> {
    errors.push(e);
    Err(Failed)
}

/// Expects `=` after `key`, and a value after it.
fn eq(input: &mut Input<'_>, errors: &mut Vec<Error>, key: &Tt, example: &str) -> Res<()> {
    let colon = |t: Option<&Tt>| t.is_some_and(|t| t.is_punct(':'));
    if colon(input.peek()) && !colon(input.peek2()) {
        let span = input.span();
        return fail(
            errors,
            Error::new(span, format!("write `=` here, not `:`, as in `{example}`")),
        );
    }
    if input.peek().is_some_and(|t| t.is_punct('=')) {
        input.next();
        if !input.is_empty() && !input.peek_comma() {
            return Ok(());
        }
    }
    fail(
        errors,
        Error::new(
            key.span,
            format!(
                "`{}` needs a value, as in `{example}`",
                key.ident().unwrap_or_default()
            ),
        ),
    )
}

/// The next expression, or the error `message` at the next token.
fn value(input: &mut Input<'_>, errors: &mut Vec<Error>, message: &str) -> Res<Expr> {
    let span = input.span();
    match input.expr() {
        Some(e) => Ok(e),
        None => fail(errors, Error::new(span, message)),
    }
}

fn lift<T>(errors: &mut Vec<Error>, r: Result<T, Error>) -> Res<T> {
    r.or_else(|e| fail(errors, e))
}

/// Stores an argument, refusing a second one of the same name: one error,
/// on the second occurrence (its name through `end`).
fn set<T>(
    errors: &mut Vec<Error>,
    slot: &mut Option<Spanned<T>>,
    name: &str,
    value: Spanned<T>,
    end: Span,
) -> Res<()> {
    if slot.is_some() {
        return fail(errors, duplicate(value.key.to(end), name));
    }
    *slot = Some(value);
    Ok(())
}

/// A second argument `name`, written at `span`.
fn duplicate(span: Span, name: &str) -> Error {
    Error::new(
        span,
        format!("duplicate argument `{name}`: it is already given; keep one"),
    )
}

/// A duration argument's example, and how a `Policy` takes a run-time
/// value (`{}` standing for it); the last three are the attribute's alone.
fn duration_slot(name: &str) -> Option<(&'static str, Option<&'static str>)> {
    Some(match name {
        "retry_after_max" => (
            "\"1m\"",
            Some("Policy::exponential(..).retry_after_max({})"),
        ),
        "stop_at_delay" => ("\"10s\"", Some("Policy::exponential(..).stop_at_delay({})")),
        "max_elapsed" => ("\"30s\"", Some("Policy::exponential(..).max_elapsed({})")),
        "reset_after" => ("\"1m\"", Some("Policy::exponential(..).reset_after({})")),
        "timeout" => ("\"30s\"", None),
        "attempt_timeout" => ("\"5s\"", None),
        _ => return None,
    })
}

const fn spanned<T>(key: Span, span: Span, value: T) -> Spanned<T> {
    Spanned { value, span, key }
}

impl Parsed {
    /// One argument; `end` is the span of its last token.
    fn parse_one(
        &mut self,
        input: &mut Input<'_>,
        errors: &mut Vec<Error>,
        scan: &Scan,
        end: Span,
        other: Option<&mut Other<'_>>,
    ) -> Res<()> {
        let Some(first) = input.peek() else {
            return Ok(());
        };
        if first.is_punct(',') {
            return fail(errors, Error::new(first.span, "extra `,`; remove it"));
        }
        if first.is_lit() || first.ident().is_some_and(|i| i == "true" || i == "false") {
            let lit = input.expr();
            if let Some(Expr::Lit(lit)) = lit {
                return fail(errors, positional_literal(&lit));
            }
            return fail(errors, Error::new(first.span, generic_argument_message()));
        }
        let Some(name) = first.ident() else {
            return fail(errors, Error::new(first.span, generic_argument_message()));
        };
        let key = input.next().unwrap_or(first);
        if let Some(kind) = StrategyKind::from_name(name) {
            let strategy = parse_strategy(kind, key, input, errors, false)?;
            if let Some(first) = &self.strategy {
                return fail(
                    errors,
                    Error::new(
                        strategy.span.to(end),
                        format!(
                            "a second strategy: `{}` is already given; keep one",
                            first.kind.name()
                        ),
                    ),
                );
            }
            self.strategy = Some(strategy);
            return Ok(());
        }
        match name {
            "attempts" => {
                eq(input, errors, key, "attempts = 5")?;
                let e = value(input, errors, crate::attribute::ATTEMPTS)?;
                let (value, span) = lift(errors, attempts_value(&e, true))?;
                set(
                    errors,
                    &mut self.attempts,
                    "attempts",
                    spanned(key.span, span, value),
                    end,
                )
            }
            "jitter" => {
                eq(input, errors, key, "jitter = \"full\"")?;
                let message = format!(
                    "expected a jitter: one of {}",
                    crate::names::JITTERS_OR_STATIC
                );
                let e = value(input, errors, &message)?;
                let (value, span) = lift(errors, jitter_value(&e))?;
                if let (JitterKind::Custom(_), None) = (&value, &other) {
                    return fail(
                        errors,
                        Error::new(
                            span,
                            "a schedule text cannot name a `static`: a `Jitterer` of your own goes on the policy, with `Policy::jitter_with`",
                        ),
                    );
                }
                set(
                    errors,
                    &mut self.jitter,
                    "jitter",
                    spanned(key.span, span, value),
                    end,
                )
            }
            "on_deadline" => self.parse_on_deadline(key, input, errors, end),
            "preset" if other.is_some() => self.parse_preset(key, input, errors, end),
            _ if duration_slot(name).is_some()
                && (other.is_some() || SCHEDULE_ARGUMENTS.contains(&name)) =>
            {
                let (example, setter) = duration_slot(name).unwrap_or_default();
                eq(input, errors, key, &format!("{name} = {example}"))?;
                let d = duration_arg(input, errors, &Slot::new(name, example, setter))?;
                let slot = match name {
                    "retry_after_max" => &mut self.retry_after_max,
                    "stop_at_delay" => &mut self.stop_at_delay,
                    "max_elapsed" => &mut self.max_elapsed,
                    "timeout" => &mut self.timeout,
                    "reset_after" => &mut self.reset_after,
                    _ => &mut self.attempt_timeout,
                };
                set(errors, slot, name, spanned(key.span, d.1, d.0), end)
            }
            _ if OTHER_ARGUMENTS.contains(&name) => match other {
                Some(other) => {
                    let known = OTHER_ARGUMENTS
                        .iter()
                        .find(|a| **a == name)
                        .map_or("", |a| a);
                    let (ok, to) = other(errors, key.span.start);
                    input.seek(to);
                    if !ok {
                        return Err(Failed);
                    }
                    if known != "on" && self.others.contains(&known) {
                        return fail(errors, duplicate(key.span.to(end), name));
                    }
                    self.others.push(known);
                    Ok(())
                }
                None => fail(
                    errors,
                    Error::new(
                        key.span,
                        format!(
                            "`{name}` is an argument of `#[retry]`, not of a schedule; a schedule takes a strategy, `attempts`, `jitter`, `max_elapsed`, `stop_at_delay`, `on_deadline` and `retry_after_max`"
                        ),
                    ),
                ),
            },
            _ if combinator_home(name).is_some() => fail(errors, unknown_stage(key, name)),
            _ => {
                let (error, meant) = unknown_argument(key, name, input, scan);
                self.broken.extend(meant);
                fail(errors, error)
            }
        }
    }

    /// `on_deadline = "give_up"` or `"last_try"`.
    fn parse_on_deadline(
        &mut self,
        key: &Tt,
        input: &mut Input<'_>,
        errors: &mut Vec<Error>,
        end: Span,
    ) -> Res<()> {
        let rules = ["give_up", "last_try"];
        let (i, span) = quoted_name(
            input,
            errors,
            key,
            ("on_deadline = \"last_try\"", "`on_deadline` rule", &rules),
            "`on_deadline` takes `\"give_up\"` or `\"last_try\"`, as in `on_deadline = \"last_try\"`",
            "expected `\"give_up\"` or `\"last_try\"`",
        )?;
        let rule = spanned(key.span, span, i == 1);
        set(errors, &mut self.on_deadline, "on_deadline", rule, end)
    }

    /// `preset = "external_api"`: a name of `PRESETS`.
    fn parse_preset(
        &mut self,
        key: &Tt,
        input: &mut Input<'_>,
        errors: &mut Vec<Error>,
        end: Span,
    ) -> Res<()> {
        let names = PRESETS.map(|p| p.0);
        let (i, span) = quoted_name(
            input,
            errors,
            key,
            ("preset = \"external_api\"", "preset", &names),
            &format!("`preset` takes a name in quotes, one of {}", list(&names)),
            &format!("the presets are {}", list(&names)),
        )?;
        let preset = spanned(key.span, span, PRESETS[i]);
        set(errors, &mut self.preset, "preset", preset, end)
    }
}

/// After `key` (`example` shows it with a value), a quoted name of `what`
/// among `names` (in another case too): its index and span. Else the
/// error: `takes` when the value is no string, "did you mean" or
/// `otherwise` for an unknown name.
fn quoted_name(
    input: &mut Input<'_>,
    errors: &mut Vec<Error>,
    key: &Tt,
    (example, what, names): (&str, &str, &[&'static str]),
    takes: &str,
    otherwise: &str,
) -> Res<(usize, Span)> {
    eq(input, errors, key, example)?;
    let span = input.span();
    let Some(Tt {
        tok: Tok::Str(text),
        span,
    }) = input.next()
    else {
        return fail(errors, Error::new(span, takes));
    };
    if let Some(i) = names.iter().position(|n| n == text) {
        return Ok((i, *span));
    }
    // (`"EXTERNAL_API"`: the name in another case.)
    let lower = text.to_lowercase();
    let same = names.iter().find(|n| **n == lower).copied();
    let message = match same.or_else(|| crate::closest(&lower, names)) {
        Some(best) => format!("unknown {what} `\"{text}\"`; did you mean `\"{best}\"`?"),
        None => format!("unknown {what} `\"{text}\"`; {otherwise}"),
    };
    fail(errors, Error::new(*span, message))
}

/// A strategy alone, composed or not (`exponential(..)`, `chain(..)`),
/// for the attribute, which hands over its name and parentheses: the
/// strategy, or every error in it.
pub(crate) fn strategy_text(text: &str) -> Result<Strategy, Vec<Error>> {
    let trees = lex(text).map_err(|e| vec![e])?;
    let mut input = Input {
        src: text,
        trees: &trees,
        pos: 0,
        end: Span::new(text.len(), text.len()),
    };
    let mut errors = Vec::new();
    let Some((key, name)) = input.next().and_then(|t| Some((t, t.ident()?))) else {
        return Err(vec![Error::new(
            Span::new(0, text.len()),
            "expected a strategy",
        )]);
    };
    let Some(kind) = StrategyKind::from_name(name) else {
        return Err(vec![unknown_stage(key, name)]);
    };
    match parse_strategy(kind, key, &mut input, &mut errors, false) {
        Ok(s) if errors.is_empty() => Ok(s),
        _ => Err(errors),
    }
}

/// A duration value.
fn duration_arg(
    input: &mut Input<'_>,
    errors: &mut Vec<Error>,
    slot: &Slot,
) -> Res<(Duration, Span)> {
    let what = slot.what();
    let message =
        format!("`{what}` takes a duration string, as in `\"250ms\"`, `\"1.5s\"` or `\"1m30s\"`");
    let e = value(input, errors, &message)?;
    lift(errors, duration_value(&e, slot))
}

/// A strategy, composed or not; `nested` inside another form.
fn parse_strategy(
    kind: StrategyKind,
    key: &Tt,
    input: &mut Input<'_>,
    errors: &mut Vec<Error>,
    nested: bool,
) -> Res<Strategy> {
    let strategy = Strategy::new(kind, key.span, nested);
    if kind.takes_stages() || kind == StrategyKind::Steps {
        return parse_composed(strategy, key, input, errors);
    }
    if input.peek().is_some_and(|t| t.is_punct('=')) {
        return fail(
            errors,
            Error::new(
                key.span,
                format!(
                    "a strategy takes its parameters in parentheses, as in `{}`",
                    example(kind)
                ),
            ),
        );
    }
    let Some(group) = input.peek().filter(|t| t.parens().is_some()) else {
        return Ok(strategy);
    };
    input.next();
    let mut content = input.group(group);
    parse_params(strategy, &mut content, errors)
}

/// The parenthesized parameters of a strategy.
fn parse_params(
    mut strategy: Strategy,
    content: &mut Input<'_>,
    errors: &mut Vec<Error>,
) -> Res<Strategy> {
    let kind = strategy.kind;
    let nested = strategy.nested;
    let stage_param = |content: &Input<'_>| {
        nested
            && content
                .named_value()
                .is_some_and(|n| matches!(n, "times" | "jitter" | "for"))
    };
    if kind == StrategyKind::Immediate && !stage_param(content) {
        let span = content.span();
        let named = content.named_value();
        let shown = {
            let mut fork = *content;
            fork.next();
            shown_value(fork.optional_value().as_ref()).unwrap_or_else(|| "...".to_owned())
        };
        if !content.is_empty() {
            let message = match named {
                Some(name) if OTHER_ARGUMENTS.contains(&name) => format!(
                    "`immediate` takes no parameters; `{name}` is an argument of its own: write `immediate, {name} = {shown}`"
                ),
                _ => "`immediate` takes no parameters; it never waits".to_owned(),
            };
            return fail(errors, Error::new(span, message));
        }
        return Ok(strategy);
    }
    // `constant("1s")`: the delay without its name.
    if kind == StrategyKind::Constant && !content.is_empty() && content.named_value().is_none() {
        let slot = Slot::new(
            "constant",
            &literal(check::DELAY),
            Some("Policy::constant({})"),
        );
        let d = duration_arg(content, errors, &slot)?;
        strategy.base = Some(spanned(d.1, d.1, d.0));
        // A stage's `constant("1m", times = 3)`.
        if content.peek_comma() && {
            let mut fork = *content;
            fork.next();
            stage_param(&fork)
        } {
            content.next();
        } else if !content.is_empty() {
            return fail(
                errors,
                Error::new(
                    content.span(),
                    format!(
                        "`constant` takes one delay, as in `{}`",
                        example(StrategyKind::Constant)
                    ),
                ),
            );
        }
        if content.is_empty() {
            return Ok(strategy);
        }
    }
    let before = errors.len();
    comma_separated(content, errors, |content, errors, _| {
        parse_param(kind, &mut strategy, content, errors)
    });
    if errors.len() > before {
        return Err(Failed);
    }
    Ok(strategy)
}

fn parse_param(
    kind: StrategyKind,
    strategy: &mut Strategy,
    input: &mut Input<'_>,
    errors: &mut Vec<Error>,
) -> Res<()> {
    let expected = || {
        format!(
            "expected a parameter of `{}`: {}",
            kind.name(),
            list(kind.params())
        )
    };
    let Some(first) = input.peek() else {
        return Ok(());
    };
    if first.is_punct(',') {
        return fail(errors, Error::new(first.span, "extra `,`; remove it"));
    }
    if first.is_lit() {
        let value = match &first.tok {
            Tok::Str(s) if duration::parse(s).is_ok() => Some(s.clone()),
            Tok::Int(i) => Some(format!("{i}ms")),
            _ => None,
        };
        // (`base`, or `unit` for `sidekiq` and `buckets`.)
        let param = kind.params().first().copied().unwrap_or("base");
        let message = match value {
            Some(value) => format!(
                "`{}` takes named parameters: write `{}({param} = \"{value}\")`",
                kind.name(),
                kind.name(),
            ),
            None => expected(),
        };
        return fail(errors, Error::new(first.span, message));
    }
    let Some(name) = first.ident() else {
        return fail(errors, Error::new(first.span, expected()));
    };
    let key = input.next().unwrap_or(first);
    if let Some(done) = parse_stage_param(strategy, key, name, input, errors) {
        return done;
    }
    if !kind.params().contains(&name) {
        return fail(errors, unknown_param(kind, key, name, input));
    }
    let example = if name == "factor" {
        "factor = 2".to_owned()
    } else {
        format!("{name} = {}", literal(check::BASE))
    };
    eq(input, errors, key, &example)?;
    let duplicate = || {
        Error::new(
            key.span,
            format!("duplicate parameter `{name}`: it is already given; keep one"),
        )
    };
    match name {
        "factor" => {
            let e = value(
                input,
                errors,
                "`factor` takes a number, as in `factor = 2` or `factor = 1.5`",
            )?;
            let (factor, span) = lift(errors, factor_value(&e))?;
            if strategy.factor.is_some() {
                return fail(errors, duplicate());
            }
            strategy.factor = Some(spanned(key.span, span, factor));
        }
        "max" => {
            let setter = format!("Policy::{}(..).max_delay({{}})", kind.name());
            let max = literal(check::MAX);
            let d = duration_arg(input, errors, &Slot::new("max", &max, Some(&setter)))?;
            if strategy.max.is_some() {
                return fail(errors, duplicate());
            }
            strategy.max = Some(spanned(key.span, d.1, d.0));
        }
        _ => {
            let constructor = match kind {
                StrategyKind::Sidekiq => "Sidekiq::new().unit({})".to_owned(),
                StrategyKind::Buckets => "Buckets::new().unit({})".to_owned(),
                _ => format!("Policy::{}({{}})", kind.name()),
            };
            let example = literal(match name {
                "delay" => check::DELAY,
                "unit" => check::UNIT,
                _ => check::BASE,
            });
            let d = duration_arg(
                input,
                errors,
                &Slot::new(name, &example, Some(&constructor)),
            )?;
            if strategy.base.is_some() {
                return fail(errors, duplicate());
            }
            strategy.base = Some(spanned(key.span, d.1, d.0));
        }
    }
    Ok(())
}

/// A name inside a strategy's parentheses that is not one of its
/// parameters: an argument, another library's name for a parameter,
/// `factor` beside a strategy without one, or a typo.
fn unknown_param(kind: StrategyKind, key: &Tt, name: &str, input: &mut Input<'_>) -> Error {
    let value = input.optional_value();
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
        return Error::new(key.span, message);
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
            .unwrap_or_else(|| param_example(param));
        return Error::new(
            key.span,
            format!(
                "unknown parameter `{name}` of `{strategy}`; {what} is `{param}`: write `{param} = {shown}`"
            ),
        );
    }
    if name == "factor" {
        return Error::new(
            key.span,
            format!(
                "`factor` applies to `exponential` only; `{strategy}` takes {}",
                list(kind.params())
            ),
        );
    }
    unknown(key, name, &format!("`{strategy}` parameter"), kind.params())
}

/// `times = n`, `for = D` or `jitter = ..` inside a strategy's
/// parentheses: `None` when `name` is none of them, else the parameter
/// parsed or its error.
fn parse_stage_param(
    strategy: &mut Strategy,
    key: &Tt,
    name: &str,
    input: &mut Input<'_>,
    errors: &mut Vec<Error>,
) -> Option<Res<()>> {
    match name {
        "times" => Some(parse_times(strategy, key, input, errors)),
        "for" => Some(parse_for(strategy, key, input, errors)),
        "jitter" if strategy.nested => Some(fail(
            errors,
            Error::new(
                key.span,
                "`jitter` applies once, to the composed delay, not to one stage; remove it here and write it after the whole strategy, as in `chain(..), jitter = \"full\"`",
            ),
        )),
        _ => None,
    }
}

fn parse_times(
    strategy: &mut Strategy,
    key: &Tt,
    input: &mut Input<'_>,
    errors: &mut Vec<Error>,
) -> Res<()> {
    if !strategy.nested {
        return fail(
            errors,
            Error::new(
                key.span,
                format!(
                    "`times` belongs to a stage of `chain`, `shorter` or `longer`, as in `{}`; for the whole call's limit write `attempts = ..`",
                    composed_example(StrategyKind::Chain)
                ),
            ),
        );
    }
    eq(input, errors, key, "times = 3")?;
    let span = input.span();
    let Some(Tt {
        tok: Tok::Int(digits),
        span,
    }) = input.next()
    else {
        return fail(
            errors,
            Error::new(
                span,
                "`times` takes a whole number of retries, as in `times = 3`",
            ),
        );
    };
    let Ok(value) = digits.parse::<u64>() else {
        return fail(
            errors,
            Error::new(*span, "number too large to fit in target type"),
        );
    };
    if strategy.times.is_some() {
        return fail(
            errors,
            Error::new(
                key.span,
                "duplicate parameter `times`: it is already given; keep one",
            ),
        );
    }
    strategy.times = Some(spanned(key.span, key.span, value));
    Ok(())
}

/// `for = D` inside a stage's parentheses: it ends at the first failure
/// once D has passed since it began.
fn parse_for(
    strategy: &mut Strategy,
    key: &Tt,
    input: &mut Input<'_>,
    errors: &mut Vec<Error>,
) -> Res<()> {
    eq(input, errors, key, "for = \"30s\"")?;
    let d = duration_arg(input, errors, &Slot::new("for", "\"30s\"", None))?;
    if !strategy.nested {
        return fail(
            errors,
            Error::new(
                key.span,
                "`for` belongs to a stage of `chain`, `shorter` or `longer`, as in `chain(constant(\"1s\", for = \"3s\"), constant(\"1m\"))`; for the whole call's time limit write `max_elapsed = ..`",
            ),
        );
    }
    if strategy.lasting.is_some() {
        return fail(
            errors,
            Error::new(
                key.span,
                "duplicate parameter `for`: it is already given; keep one",
            ),
        );
    }
    strategy.lasting = Some(spanned(key.span, d.1, d.0));
    Ok(())
}

/// A composed form's parentheses: its stages, or for `steps` its delays;
/// a stage's own `times = n` among them.
fn parse_composed(
    mut strategy: Strategy,
    key: &Tt,
    input: &mut Input<'_>,
    errors: &mut Vec<Error>,
) -> Res<Strategy> {
    let kind = strategy.kind;
    let Some(group) = input.peek().filter(|t| t.parens().is_some()) else {
        let what = if kind == StrategyKind::Steps {
            "its delays"
        } else {
            "its stages"
        };
        return fail(
            errors,
            Error::new(
                key.span,
                format!(
                    "`{}` takes {what} in parentheses, as in `{}`",
                    kind.name(),
                    composed_example(kind)
                ),
            ),
        );
    };
    input.next();
    let mut content = input.group(group);
    if kind == StrategyKind::Steps
        && let Some(mistake) = steps_mistake(&content)
    {
        return fail(errors, mistake);
    }
    let before = errors.len();
    comma_separated(&mut content, errors, |content, errors, _| {
        parse_item(&mut strategy, content, errors)
    });
    if errors.len() > before {
        return Err(Failed);
    }
    let (count, least) = if kind == StrategyKind::Steps {
        (strategy.steps.len(), 1)
    } else {
        (strategy.stages.len(), 2)
    };
    if count < least {
        let what = if kind == StrategyKind::Steps {
            "at least one delay"
        } else {
            "at least two stages"
        };
        return fail(
            errors,
            Error::new(
                key.span,
                format!(
                    "`{}` takes {what}, as in `{}`",
                    kind.name(),
                    composed_example(kind)
                ),
            ),
        );
    }
    Ok(strategy)
}

/// `steps(..)` written with numbers for delays, or with strategies: one
/// error for the whole list, on its first such item.
fn steps_mistake(content: &Input<'_>) -> Option<Error> {
    let items: Vec<Expr> = crate::value::split_commas(content.trees)
        .into_iter()
        .filter(|a| !a.is_empty())
        .map(|a| match expr(a, content.src) {
            Some((e, n)) if n == a.len() => Some(e),
            _ => None,
        })
        .collect::<Option<_>>()?;
    // (`constant("1s")`, `immediate`: a strategy's name first.)
    let strategy = items
        .iter()
        .find(|item| first_ident(item).is_some_and(|i| StrategyKind::from_name(i).is_some()));
    if let Some(item) = strategy {
        return Some(Error::new(
            item.span(),
            format!(
                "`steps` takes delays, as in `{}`, not strategies; to run one strategy after another, write `{}`",
                composed_example(StrategyKind::Steps),
                composed_example(StrategyKind::Chain)
            ),
        ));
    }
    let is_int = |item: &Expr| {
        matches!(
            item,
            Expr::Lit(Lit {
                kind: LitKind::Int(_),
                ..
            })
        )
    };
    let first = items.iter().find(|item| is_int(item))?;
    let written: Vec<String> = items
        .iter()
        .map(|item| match item {
            Expr::Lit(Lit {
                kind: LitKind::Int(i),
                ..
            }) => format!("\"{i}s\""),
            other => {
                let s = other.span();
                content.src[s.start..s.end].to_owned()
            }
        })
        .collect();
    Some(Error::new(
        first.span(),
        format!(
            "the delays of `steps` are durations with a unit: write `steps({})` for seconds, or `ms` for milliseconds",
            written.join(", ")
        ),
    ))
}

/// The first name of a path or of a call's path.
fn first_ident(e: &Expr) -> Option<&str> {
    match e {
        Expr::Path(p) if !p.leading => p.segments.first().map(String::as_str),
        Expr::Call(f, _, _) => first_ident(f),
        _ => None,
    }
}

/// One stage (or delay of `steps`), or the form's own `times = n`.
fn parse_item(
    strategy: &mut Strategy,
    content: &mut Input<'_>,
    errors: &mut Vec<Error>,
) -> Res<()> {
    let kind = strategy.kind;
    let Some(first) = content.peek() else {
        return Ok(());
    };
    if first.is_punct(',') {
        return fail(errors, Error::new(first.span, "extra `,`; remove it"));
    }
    if let Some(name) = content.named_value() {
        let key = content.next().unwrap_or(first);
        if let Some(done) = parse_stage_param(strategy, key, name, content, errors) {
            return done;
        }
        return fail(
            errors,
            Error::new(
                key.span,
                format!(
                    "`{}` takes no parameter `{name}`; give each stage its own parameters, as in `{}`",
                    kind.name(),
                    composed_example(kind)
                ),
            ),
        );
    }
    if kind == StrategyKind::Steps {
        let d = duration_arg(content, errors, &Slot::new("steps", "\"1s\"", None))?;
        strategy.steps.push(spanned(d.1, d.1, d.0));
        return Ok(());
    }
    if first.is_lit() {
        return fail(
            errors,
            Error::new(
                first.span,
                format!(
                    "a stage of `{}` is a strategy, as in `{}`; for a list of delays write `steps(..)`",
                    kind.name(),
                    composed_example(kind)
                ),
            ),
        );
    }
    let Some(name) = first.ident() else {
        return fail(errors, Error::new(first.span, "expected identifier"));
    };
    let key = content.next().unwrap_or(first);
    let Some(stage) = StrategyKind::from_name(name) else {
        return fail(errors, unknown_stage(key, name));
    };
    let stage = parse_strategy(stage, key, content, errors, true)?;
    strategy.stages.push(stage);
    Ok(())
}

/// An unknown name where a strategy stands: Effect's combinators are
/// named for the form that does the same.
fn unknown_stage(key: &Tt, name: &str) -> Error {
    match combinator_home(name) {
        Some(form) => {
            let does = match form {
                "shorter" => "waits the shorter of two schedules' delays",
                "longer" => "waits the longer of two schedules' delays",
                _ => "runs one schedule, then the next",
            };
            Error::new(
                key.span,
                format!(
                    "unknown strategy `{name}`; did you mean `{form}`? it {does}, as Effect's `{name}` does: `{}`",
                    composed_example(StrategyKind::from_name(form).unwrap_or(StrategyKind::Chain))
                ),
            )
        }
        None => unknown(key, name, "strategy", &StrategyKind::NAMES),
    }
}

/// A literal where an argument name belongs: `5`, `"1s"`.
fn positional_literal(lit: &Lit) -> Error {
    let message = match &lit.kind {
        LitKind::Int(i) => format!(
            "a number needs the name of its argument: for the number of calls, write `attempts = {i}`"
        ),
        LitKind::Str(text) => {
            if StrategyKind::from_name(text).is_some() {
                format!("write the strategy without quotes: `{text}`")
            } else if JITTER_NAMES.contains(&text.as_str()) {
                format!("a jitter needs its argument name: write `jitter = \"{text}\"`")
            } else if duration::parse(text).is_ok() {
                format!(
                    "a duration needs a strategy around it: write `constant(\"{text}\")` or `exponential(base = \"{text}\")`"
                )
            } else {
                generic_argument_message()
            }
        }
        _ => generic_argument_message(),
    };
    Error::new(lit.span, message)
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
fn unknown_argument(
    key: &Tt,
    name: &str,
    input: &mut Input<'_>,
    scan: &Scan,
) -> (Error, Option<&'static str>) {
    let value = input.optional_value();
    let shown = shown_value(value.as_ref());
    let error = |message: String| Error::new(key.span, message);
    if let Some((own, _)) = param_home(name) {
        return (
            error(misplaced_param(name, own, shown.as_deref(), scan)),
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
    let count = || match &value {
        Some(Expr::Lit(Lit {
            kind: LitKind::Int(i),
            ..
        })) => i.parse::<u64>().ok(),
        _ => None,
    };
    let unlimited = shown.as_deref() == Some("unlimited");
    let (message, meant) = match name {
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
            let meant = crate::closest(name, &arguments());
            return (unknown(key, name, "argument", &arguments()), meant);
        }
    };
    (error(message), Some(meant))
}

/// An unknown name, with "did you mean" when one is close.
fn unknown(key: &Tt, name: &str, what: &str, known: &[&str]) -> Error {
    match crate::closest(name, known) {
        Some(best) => Error::new(
            key.span,
            format!("unknown {what} `{name}`; did you mean `{best}`?"),
        ),
        None => Error::new(
            key.span,
            format!("unknown {what} `{name}`; expected one of {}", list(known)),
        ),
    }
}

pub(crate) fn list(names: &[&str]) -> String {
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

/// A duration as a literal: `"100ms"`.
pub(crate) fn literal(d: Duration) -> String {
    format!("\"{}\"", duration::format(d))
}

/// A value that fits `param`: its default.
fn param_example(param: &str) -> String {
    match param {
        "factor" => "2".to_owned(),
        "max" => literal(check::MAX),
        "delay" => literal(check::DELAY),
        _ => literal(check::BASE),
    }
}

/// The message for a strategy parameter (`own`, or another library's
/// `name` for it) written beside the strategy.
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

/// The strategy written with its defaults.
pub(crate) fn example(kind: StrategyKind) -> String {
    let (base, max) = (literal(check::BASE), literal(check::MAX));
    match kind {
        StrategyKind::Exponential => format!("exponential(base = {base}, factor = 2, max = {max})"),
        StrategyKind::Constant => format!("constant({})", literal(check::DELAY)),
        StrategyKind::Immediate => "immediate".to_owned(),
        composed if composed.takes_stages() || composed == StrategyKind::Steps => {
            composed_example(composed)
        }
        StrategyKind::Sidekiq | StrategyKind::Buckets => format!(
            "{}(unit = {}, max = \"1h\")",
            kind.name(),
            literal(check::UNIT)
        ),
        other => format!("{}(base = {base}, max = {max})", other.name()),
    }
}

/// The form written with two stages, for messages.
pub(crate) fn composed_example(kind: StrategyKind) -> String {
    match kind {
        StrategyKind::Chain => {
            "chain(exponential(base = \"100ms\", times = 3), constant(\"1m\"))".to_owned()
        }
        StrategyKind::Steps => "steps(\"1s\", \"5s\", \"30s\")".to_owned(),
        StrategyKind::Sum => {
            "sum(constant(\"3m\"), exponential(base = \"2m\", max = \"1h\"))".to_owned()
        }
        other => format!(
            "{}(exponential(base = \"1s\", max = \"1m\"), linear(base = \"3s\", max = \"1m\"))",
            other.name()
        ),
    }
}

/// The first strategy at the top level, found before parsing, for the
/// messages about a strategy parameter written beside it.
#[derive(Default)]
struct Scan {
    strategy: Option<StrategyKind>,
    /// Whether that strategy already has parameters in parentheses.
    with_params: bool,
}

impl Scan {
    fn new(trees: &[Tt]) -> Scan {
        let mut at_start = true;
        for (i, t) in trees.iter().enumerate() {
            if t.is_punct(',') {
                at_start = true;
                continue;
            }
            if at_start && let Some(kind) = t.ident().and_then(StrategyKind::from_name) {
                let with_params = matches!(trees.get(i + 1), Some(Tt { tok: Tok::Group(_, inner), .. }) if !inner.is_empty());
                return Scan {
                    strategy: Some(kind),
                    with_params,
                };
            }
            at_start = false;
        }
        Scan::default()
    }
}
