//! The checks of a schedule, and the defaults they name: each strategy's
//! parameters, composed schedules (`times` where it belongs, stages that
//! read their own previous delay, stages the attempt limit never reaches),
//! `jitter`, `attempts`, and the stop rules.

use core::time::Duration;

use crate::eval::{HORIZON, StopAt, stop_at};
use crate::parse::{Parsed, literal};
use crate::{
    Attempts, Error, JitterKind, Spanned, Strategy as StrategyArg, StrategyKind, duration,
};

/// The base of the growing strategies when none is given (the runtime's).
pub const BASE: Duration = Duration::from_millis(100);

/// Their `max` when none is given (the runtime's).
pub(crate) const MAX: Duration = Duration::from_secs(10);

/// `sidekiq`'s and `buckets`' unit when none is given: their formulas
/// count in seconds.
pub const UNIT: Duration = Duration::from_secs(1);

/// `constant`'s delay when none is given.
pub(crate) const DELAY: Duration = Duration::from_secs(1);

/// The first delay of `kind` when none is given: `constant`'s delay, or the
/// others' base.
pub const fn base(kind: StrategyKind) -> Duration {
    match kind {
        StrategyKind::Constant => DELAY,
        StrategyKind::Sidekiq | StrategyKind::Buckets => UNIT,
        _ => BASE,
    }
}

/// The jitter a strategy has when `jitter` is not given: the runtime's
/// table for its strategies, and none for `sidekiq` and `buckets` (random
/// by themselves) and `steps` (read as written).
pub(crate) const fn default_jitter(kind: StrategyKind) -> JitterKind {
    match kind {
        StrategyKind::Decorrelated
        | StrategyKind::Immediate
        | StrategyKind::Sidekiq
        | StrategyKind::Buckets
        | StrategyKind::Steps => JitterKind::None,
        _ => JitterKind::Full,
    }
}

type Errors = Vec<Error>;
type Arg<T> = Spanned<T>;

/// Checks a parsed schedule, in the attribute's order.
pub(crate) fn check(args: &Parsed, errors: &mut Errors) {
    check_schedule(args, errors);
    if let Some(attempts) = &args.attempts {
        check_attempts(attempts, errors);
    }
    positive("retry_after_max", args.retry_after_max.as_ref(), errors);
    if let Some(jitter) = &args.jitter {
        check_jitter(jitter, args.strategy.as_ref().map(|s| s.kind), errors);
    }
    positive("max_elapsed", args.max_elapsed.as_ref(), errors);
}

/// A duration argument (`max_elapsed`, the attribute's `timeout`, ..)
/// given as zero, which none allows: what the zero would mean.
fn positive(name: &str, d: Option<&Arg<Duration>>, errors: &mut Errors) {
    let Some(d) = d.filter(|d| d.value.is_zero()) else {
        return;
    };
    let message = match name {
        "retry_after_max" => {
            "a `retry_after_max` of zero gives up on every `Decision::RetryAfter`; give a positive limit"
        }
        "max_elapsed" => "`max_elapsed` of zero allows no retry; give a positive limit",
        "stop_at_delay" => "a `stop_at_delay` of zero allows no retry; give a positive delay",
        "attempt_timeout" => {
            "an `attempt_timeout` of zero fails every attempt; give a positive limit"
        }
        "timeout" => "a `timeout` of zero fails every call; give a positive limit",
        "reset_after" => {
            "a `reset_after` of zero starts the schedule over at every failure, so the call never gives up; give a positive limit"
        }
        _ => return,
    };
    errors.push(Error::new(d.span, message));
}

/// Checks the main strategy, composed or not (`throttled`'s is checked
/// with the other arguments, as an `on(..)` arm's).
fn check_schedule(args: &Parsed, errors: &mut Errors) {
    if let Some(s) = &args.strategy {
        let attempts = args.attempts.as_ref().map(|a| a.value);
        let deadline = args.max_elapsed.as_ref().map(|d| d.value);
        errors.extend(check_strategy_in(s, attempts, true, deadline));
    }
    if let Some(jitter) = &args.jitter {
        check_range(jitter, errors);
    }
    check_stop(args, errors);
    check_on_deadline(args, errors);
}

/// `on_deadline = "last_try"` needs a deadline, and time for the try.
fn check_on_deadline(args: &Parsed, errors: &mut Errors) {
    if let Some(rule) = &args.on_deadline {
        let excused = args.broken.contains(&"max_elapsed");
        let max_elapsed = args.max_elapsed.as_ref().map(|m| m.value);
        on_deadline_rule(rule, max_elapsed, None, excused, errors);
    }
}

/// `on_deadline`'s rule beside `max_elapsed` (none `excused` when what
/// would give it did not parse, or the attribute's `policy` does) and the
/// attribute's `timeout`, which must leave the last try some time.
fn on_deadline_rule(
    rule: &Arg<bool>,
    max_elapsed: Option<Duration>,
    timeout: Option<Duration>,
    excused: bool,
    errors: &mut Errors,
) {
    let Some(max_elapsed) = max_elapsed else {
        if !excused {
            errors.push(Error::new(
                rule.key,
                "`on_deadline` says what happens at the `max_elapsed` deadline, and there is none; add `max_elapsed = \"30s\"`, or remove `on_deadline`",
            ));
        }
        return;
    };
    if rule.value
        && let Some(timeout) = timeout.filter(|t| *t <= max_elapsed)
    {
        errors.push(Error::new(
            rule.span,
            format!(
                "`on_deadline = \"last_try\"` would have no time for its try: the `timeout` of `\"{}\"` ends the call no later than the `max_elapsed` deadline of `\"{}\"`; give `timeout` more than `max_elapsed`, or remove `on_deadline`",
                duration::format(timeout),
                duration::format(max_elapsed),
            ),
        ));
    }
}

/// `stop_at_delay`: a rule that can act, before any retry is lost to it.
fn check_stop(args: &Parsed, errors: &mut Errors) {
    let Some(stop) = &args.stop_at_delay else {
        return;
    };
    if stop.value.is_zero() {
        return positive("stop_at_delay", Some(stop), errors);
    }
    check_stop_rule(args.strategy.as_ref(), stop, args.attempts.as_ref(), errors);
}

/// A positive `stop_at_delay` for `strategy` (`None`: the default): the
/// rule can act, and `attempts` does not end the call first.
fn check_stop_rule(
    strategy: Option<&StrategyArg>,
    stop: &Arg<Duration>,
    attempts: Option<&Arg<Attempts>>,
    errors: &mut Errors,
) {
    let d = stop.value;
    let shown = duration::format(d);
    let cap = crate::eval::max(strategy.unwrap_or(&StrategyArg::default_exponential()));
    match stop_at(strategy, d) {
        StopAt::Random if cap < d => errors.push(never_stops(stop, &shown, cap)),
        StopAt::Random => {}
        StopAt::Never { max } if max < d => errors.push(never_stops(stop, &shown, max)),
        StopAt::Never { .. } => errors.push(Error::new(
            stop.span,
            format!(
                "no delay reaches `stop_at_delay` (`\"{shown}\"`) within {HORIZON} retries; lower `stop_at_delay`, or give `attempts` instead"
            ),
        )),
        StopAt::Attempts(1) => errors.push(Error::new(
            stop.span,
            format!(
                "the first delay already reaches `stop_at_delay` (`\"{shown}\"`), so no retry would ever run; raise `stop_at_delay` above the first delay"
            ),
        )),
        StopAt::Attempts(k) => {
            if let Some(attempts) = attempts
                && let Attempts::Limited(n) = attempts.value
                && n <= k
            {
                errors.push(Error::new(
                    attempts.span,
                    format!(
                        "`attempts = {n}` always ends the call before `stop_at_delay` (`\"{shown}\"`) can act: the first delay to reach it is retry {k}'s, and {n} attempts allow {} {}; remove `attempts`, or raise it above {k}",
                        n.saturating_sub(1),
                        if n == 2 { "retry" } else { "retries" }
                    ),
                ));
            }
        }
    }
}

/// A schedule capped below the stop never reaches it.
fn never_stops(stop: &Arg<Duration>, shown: &str, max: Duration) -> Error {
    Error::new(
        stop.span,
        format!(
            "`stop_at_delay` (`\"{shown}\"`) is above the schedule's `max` (`\"{}\"`), which no delay exceeds, so the rule would never stop the call; lower `stop_at_delay` to `\"{}\"` or less, or raise `max`",
            duration::format(max),
            duration::format(max),
        ),
    )
}

/// The checks of a strategy beside its attempt limit (default
/// [`DEFAULT_ATTEMPTS`](crate::DEFAULT_ATTEMPTS)): its parameters, `times`
/// and `for` where they belong, `decorrelated` where it reads its own
/// delay, a stage of a top-level `chain` never reached; for the `main`
/// schedule, also a `for` the `max_elapsed` `deadline` cuts short and the
/// boundaries a call keeps. Every mistake, in the attribute's order.
pub fn check_strategy_in(
    s: &StrategyArg,
    attempts: Option<Attempts>,
    main: bool,
    deadline: Option<Duration>,
) -> Vec<Error> {
    let mut errors = Vec::new();
    check_tree(s, None, &mut errors);
    if s.kind == StrategyKind::Chain {
        check_reachable(s, attempts, &mut errors);
    }
    if !main {
        return errors;
    }
    if let Some(deadline) = deadline {
        check_for_deadline(s, deadline, &mut errors);
    }
    let marks = marks(s);
    if marks > 4 {
        errors.push(Error::new(
            s.span,
            format!(
                "this schedule has {marks} stage boundaries placed by time (the end of each stage of `chain` that lasts `for` a time or comes before one that does), and a call keeps at most 4; use fewer stages up to the last `for`"
            ),
        ));
    }
    errors
}

/// One strategy and its stages; `within` is the form it is a stage of.
fn check_tree(s: &StrategyArg, within: Option<StrategyKind>, errors: &mut Errors) {
    if !s.kind.takes_stages() && s.kind != StrategyKind::Steps {
        check_strategy(s, errors);
    }
    if s.kind == StrategyKind::Decorrelated
        && let Some(form) = within.filter(|f| f.combines())
    {
        errors.push(Error::new(
            s.span,
            format!(
                "`decorrelated` cannot be a stage of `{form}`: it draws each delay from its own previous one, and inside `{form}` the previous delay is the combined one; use it as the main strategy or as a stage of `chain`, or use `exponential` here",
                form = form.name()
            ),
        ));
    }
    // Inside `sum`, a `chain` stage's `decorrelated` is still combined.
    let within = match (within, s.kind) {
        (Some(outer), _) if outer.combines() => Some(outer),
        (_, kind) if kind.takes_stages() => Some(kind),
        (outer, _) => outer,
    };
    if s.kind == StrategyKind::Chain {
        check_times(s, errors);
    }
    for stage in &s.stages {
        check_tree(stage, within, errors);
        check_end(s.kind, stage, errors);
    }
}

/// The first stage in `s` that ends by time, or side of `shorter`/`longer`
/// that ends: its `for` or `times` (a schedule whose delays depend on the
/// call).
pub fn first_end(s: &StrategyArg) -> Option<crate::Span> {
    let sides = matches!(s.kind, StrategyKind::Shorter | StrategyKind::Longer);
    s.stages.iter().find_map(|stage| {
        let own = stage.times.as_ref().filter(|_| sides).map(|t| t.span);
        let lasting = stage.lasting.as_ref().map(|f| f.key);
        lasting.or(own).or_else(|| first_end(stage))
    })
}

/// The boundaries of `s` a call marks, as the runtime counts them
/// (`Strategy::staging`): one per stage of `chain` that ends by time or
/// that a stage which ends follows.
fn marks(s: &StrategyArg) -> usize {
    let own = match s.kind {
        StrategyKind::Chain => (0..s.stages.len().saturating_sub(1))
            .filter(|&i| {
                s.stages[i..]
                    .iter()
                    .any(|t| t.lasting.is_some() || first_end(t).is_some())
            })
            .count(),
        _ => 0,
    };
    own + s.stages.iter().map(marks).sum::<usize>()
}

/// A `for` no shorter than `max_elapsed` never acts: the deadline ends the
/// call first.
fn check_for_deadline(s: &StrategyArg, deadline: Duration, errors: &mut Errors) {
    for stage in &s.stages {
        if let Some(lasting) = &stage.lasting
            && lasting.value >= deadline
        {
            errors.push(Error::new(
                lasting.span,
                format!(
                    "`for = \"{}\"` never acts: the `max_elapsed` deadline of `\"{}\"` ends the call before the stage could end; make `for` shorter than `max_elapsed`, or remove it",
                    duration::format(lasting.value),
                    duration::format(deadline),
                ),
            ));
        }
        check_for_deadline(stage, deadline, errors);
    }
}

/// A stage's `times` and `for`: one of them at most, and only where a
/// stage ends (`chain`, `shorter`, `longer`; not `sum`).
fn check_end(form: StrategyKind, stage: &StrategyArg, errors: &mut Errors) {
    let lasting = stage.lasting.as_ref().map(|f| f.key);
    let ends = matches!(
        form,
        StrategyKind::Chain | StrategyKind::Shorter | StrategyKind::Longer
    );
    if !ends {
        let times = stage.times.as_ref().map(|t| t.span);
        let given = [(times, "times"), (lasting, "for")];
        for (span, name) in given.into_iter().filter_map(|(s, n)| Some((s?, n))) {
            errors.push(Error::new(
                span,
                format!(
                    "`{name}` belongs to a stage of `chain`, `shorter` or `longer`; every stage of `{}` applies to every retry: remove `{name}`",
                    form.name()
                ),
            ));
        }
    } else if let (Some(_), Some(span)) = (&stage.times, lasting) {
        errors.push(Error::new(
            span,
            "a stage ends after `times` retries or once `for` has passed, not both; keep one",
        ));
    }
}

/// Every stage of a `chain` but the last takes `times`, the last none.
fn check_times(chain: &StrategyArg, errors: &mut Errors) {
    let last = chain.stages.len().saturating_sub(1);
    for (i, stage) in chain.stages.iter().enumerate() {
        if let Some(lasting) = stage.lasting.as_ref() {
            let message = if i == last {
                format!(
                    "`for` on the last stage of `chain`: `{}` runs until the call ends; remove `for` here",
                    stage.kind.name()
                )
            } else if lasting.value.is_zero() {
                format!(
                    "`for = \"0s\"`: stage {} of `chain` would never run; remove the stage, or give it some time",
                    i + 1
                )
            } else {
                continue;
            };
            errors.push(Error::new(lasting.key, message));
            continue;
        }
        match (&stage.times, i == last) {
            (Some(times), true) => errors.push(Error::new(
                times.span,
                format!(
                    "`times` on the last stage of `chain`: `{}` runs until the call ends; remove `times` here",
                    stage.kind.name()
                ),
            )),
            (None, false) => errors.push(Error::new(
                stage.span,
                format!(
                    "stage {} of `chain` needs `times`, the retries it schedules before the next stage, as in `{}(.., times = 3)`",
                    i + 1,
                    stage.kind.name()
                ),
            )),
            (Some(times), false) if times.value == 0 => errors.push(Error::new(
                times.span,
                format!(
                    "`times = 0`: stage {} of `chain` would never run; remove the stage, or give it at least one retry",
                    i + 1
                ),
            )),
            _ => {}
        }
    }
}

/// A stage of the top-level `chain` that starts after the last retry the
/// attempt limit allows.
fn check_reachable(chain: &StrategyArg, attempts: Option<Attempts>, errors: &mut Errors) {
    let (limit, given) = match attempts {
        Some(Attempts::Unlimited) => return,
        Some(Attempts::Limited(n)) => (n, true),
        None => (crate::DEFAULT_ATTEMPTS, false),
    };
    if limit == 0 {
        return;
    }
    let retries = limit - 1;
    let mut start: u64 = 1;
    for (i, stage) in chain.stages.iter().enumerate() {
        if i > 0 && start > retries {
            let limit_text = if given {
                format!("`attempts = {limit}`")
            } else {
                format!("the default `attempts` ({limit})")
            };
            errors.push(Error::new(
                stage.span,
                format!(
                    "stage {} of `chain` (`{}`) is never reached: it starts at retry {start}, and {limit_text} allows {retries} {}; raise `attempts` to at least {}, or lower the `times` before it",
                    i + 1,
                    stage.kind.name(),
                    if retries == 1 { "retry" } else { "retries" },
                    start.saturating_add(1),
                ),
            ));
            return;
        }
        let Some(times) = &stage.times else { return };
        start = start.saturating_add(times.value);
    }
}

/// `range(lo, hi)`: `0 ≤ lo ≤ hi`, both finite.
fn check_range(jitter: &Arg<JitterKind>, errors: &mut Errors) {
    let JitterKind::Range(lo, hi) = jitter.value else {
        return;
    };
    let message = if !lo.is_finite() || !hi.is_finite() {
        "the bounds of `range` must be finite numbers, as in `range(0.5, 1.5)`"
    } else if lo > f64::from(f32::MAX) || hi > f64::from(f32::MAX) {
        // (The runtime keeps them as `f32`.)
        "the bounds of `range` multiply the delay and must be at most 3.4e38, as in `range(0.5, 1.5)`"
    } else if lo < 0.0 || hi < 0.0 {
        "the bounds of `range` multiply the delay and cannot be negative; write `range(0, ..)` for waits from zero"
    } else if lo > hi {
        "the lower bound of `range` is above the upper one; write the smaller first, as in `range(0.5, 1.5)`"
    } else {
        return;
    };
    errors.push(Error::new(jitter.span, message));
}

/// Checks one strategy's parameters.
fn check_strategy(s: &StrategyArg, errors: &mut Errors) {
    if matches!(s.kind, StrategyKind::Sidekiq | StrategyKind::Buckets) {
        // (`unit` scales a formula whose own cap is `max`.)
        if let Some(unit) = s.base.as_ref().filter(|u| u.value.is_zero()) {
            errors.push(Error::new(
                unit.span,
                format!(
                    "`unit` must be above zero: `{}` counts its delays in units; to retry without waiting, write `immediate`",
                    s.kind.name()
                ),
            ));
        }
        return;
    }
    if let Some(base) = &s.base {
        if base.value.is_zero() {
            let what = if s.kind == StrategyKind::Constant {
                "the delay of `constant`"
            } else {
                "`base`"
            };
            errors.push(Error::new(
                base.span,
                format!("{what} must be above zero; to retry without waiting, write `immediate`"),
            ));
        } else if s.kind != StrategyKind::Constant {
            let (max, which) = match &s.max {
                Some(max) => (max.value, "`max`".to_owned()),
                None => (MAX, format!("the default `max` (`{}`)", literal(MAX))),
            };
            if base.value > max {
                errors.push(Error::new(
                    base.span,
                    format!("`base` is above {which}; lower `base` or raise `max`"),
                ));
            }
        }
    } else if let Some(max) = &s.max
        && s.kind != StrategyKind::Constant
        && max.value < BASE
    {
        errors.push(Error::new(
            max.span,
            format!(
                "`max` is below the default `base` (`{}`); raise `max` or give a lower `base`",
                literal(BASE)
            ),
        ));
    }
    if let Some(factor) = &s.factor
        && (!factor.value.is_finite() || factor.value <= 1.0)
    {
        errors.push(Error::new(
            factor.span,
            "`factor` must be a finite number above 1, as in `factor = 2` or `factor = 1.5`",
        ));
    }
}

/// Checks an attempt limit.
fn check_attempts(attempts: &Arg<Attempts>, errors: &mut Errors) {
    if let Attempts::Limited(n) = attempts.value {
        if n == 0 {
            errors.push(Error::new(
                attempts.span,
                "`attempts = 0` would never call the function; `attempts` counts calls, the first included, so it must be at least 1",
            ));
        } else if n > u64::from(u32::MAX) {
            errors.push(Error::new(
                attempts.span,
                crate::value::attempts_out_of_range(n),
            ));
        }
    }
}

/// The checks of one value alone, for the attribute: each error is on
/// `VALUE` (the value) or `OTHER` (the argument's name, or the other
/// argument named).
pub mod value_checks {
    use core::time::Duration;

    use crate::{Attempts, Error, JitterKind, Span, Spanned, Strategy, StrategyKind};

    /// Where an error about the value is.
    pub const VALUE: Span = Span::new(0, 0);
    /// Where an error about the argument's name (`jitter`), or the other
    /// argument (`attempts` beside `stop_at_delay`), is.
    pub const OTHER: Span = Span::new(1, 1);

    /// The errors `check` pushes.
    fn collected(check: impl FnOnce(&mut Vec<Error>)) -> Vec<Error> {
        let mut errors = Vec::new();
        check(&mut errors);
        errors
    }

    fn arg<T>(value: T) -> Spanned<T> {
        Spanned {
            value,
            span: VALUE,
            key: OTHER,
        }
    }

    /// `jitter`'s value beside the strategy it is for.
    pub fn jitter(jitter: JitterKind, strategy: Option<StrategyKind>) -> Vec<Error> {
        collected(|errors| super::check_jitter(&arg(jitter), strategy, errors))
    }

    /// `range(lo, hi)`'s bounds.
    pub fn range(jitter: JitterKind) -> Vec<Error> {
        collected(|errors| super::check_range(&arg(jitter), errors))
    }

    /// `on_deadline`'s rule (`last_try`) beside `max_elapsed` and
    /// `timeout` (see `on_deadline_rule`).
    pub fn on_deadline(
        last_try: bool,
        max_elapsed: Option<Duration>,
        timeout: Option<Duration>,
        excused: bool,
    ) -> Vec<Error> {
        collected(|errors| {
            super::on_deadline_rule(&arg(last_try), max_elapsed, timeout, excused, errors)
        })
    }

    /// A duration argument `name` (`max_elapsed`, `timeout`, ..): above
    /// zero.
    pub fn positive(name: &str, d: Duration) -> Vec<Error> {
        collected(|errors| super::positive(name, Some(&arg(d)), errors))
    }

    /// `attempts`' value.
    pub fn attempts(attempts: Attempts) -> Vec<Error> {
        collected(|errors| super::check_attempts(&arg(attempts), errors))
    }

    /// A positive `stop_at_delay` for `strategy` (`None`: the default)
    /// beside `attempts` (its errors on [`OTHER`]).
    pub fn stop_rule(
        strategy: Option<&Strategy>,
        stop: Duration,
        attempts: Option<Attempts>,
    ) -> Vec<Error> {
        let attempts = attempts.map(|a| Spanned {
            value: a,
            span: OTHER,
            key: OTHER,
        });
        collected(|errors| super::check_stop_rule(strategy, &arg(stop), attempts.as_ref(), errors))
    }
}

/// A `jitter` (the top-level one, or an arm's) and the strategy it is for.
fn check_jitter(jitter: &Arg<JitterKind>, strategy: Option<StrategyKind>, errors: &mut Errors) {
    if let JitterKind::Scattered(r) = jitter.value
        && !(r > 0.0 && r <= 1.0)
    {
        errors.push(Error::new(
            jitter.span,
            "the ratio of `scattered` must be above 0 and at most 1, as in `scattered(0.25)`",
        ));
    }
    // (`"spread"` replaces its randomness: it spreads around its
    // mid-range chain.)
    if strategy == Some(StrategyKind::Decorrelated)
        && !matches!(jitter.value, JitterKind::None | JitterKind::Spread)
    {
        errors.push(Error::new(
            jitter.key,
            "`decorrelated` is random by itself and takes no other `jitter` than `\"spread\"`; remove `jitter`",
        ));
    }
}
