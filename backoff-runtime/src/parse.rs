use core::fmt;
use core::ops::Range;
use core::str::FromStr;
use core::time::Duration;
use std::sync::Arc;

use backoff_schedule::{Attempts, JitterKind, StrategyKind};

use crate::jitter::{Jitter, JitterRng};
use crate::policy::{OnDeadline, Policy};
use crate::strategy::{At, Leaf, Staging, reads_through};
use crate::strategy::{
    Buckets, Chain, Constant, Decorrelated, Exponential, Fibonacci, Immediate, Linear, Longer,
    Shorter, Sidekiq, Stage, Strategy, Sum,
};

/// A policy read from text: [`Policy::parse`]'s. It works wherever a
/// `Policy` does (`#[retry(policy = &*P)]`, the loops, `tower`,
/// [`delay_for`](Policy::delay_for)), and is `Send + Sync + 'static` and
/// `Clone`.
///
/// ```
/// use backoff_runtime::{DynPolicy, Policy, retry};
/// use std::sync::LazyLock;
///
/// static POLICY: LazyLock<DynPolicy> = LazyLock::new(|| {
///     let text = std::env::var("FETCH_RETRY").unwrap_or_else(|_| "immediate, attempts = 3".into());
///     Policy::parse(&text).expect("FETCH_RETRY")
/// });
///
/// #[retry(policy = &*POLICY)]
/// fn fetch(calls: &mut u32) -> Result<u32, String> {
///     *calls += 1;
///     if *calls < 3 { Err("busy".into()) } else { Ok(*calls) }
/// }
///
/// assert_eq!(fetch(&mut 0), Ok(3));
/// ```
pub type DynPolicy = Policy<DynStrategy>;

/// A strategy behind a shared pointer: the strategy of a [`DynPolicy`],
/// composed or not, built from text.
#[derive(Clone)]
pub struct DynStrategy(Arc<dyn Strategy + Send + Sync>);

impl DynStrategy {
    /// Wraps any strategy.
    pub(crate) fn new<S: Strategy + Send + Sync + 'static>(strategy: S) -> DynStrategy {
        DynStrategy(Arc::new(strategy))
    }
}

impl fmt::Debug for DynStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynStrategy")
            .field("max_delay", &self.0.max_delay())
            .finish_non_exhaustive()
    }
}

/// `$call` on the strategy `$this` shares.
macro_rules! shared {
    ($this:expr, $s:ident => $call:expr) => {{
        let $s = &*$this.0;
        $call
    }};
}

impl Strategy for DynStrategy {
    reads_through!(shared);

    fn staging(&self) -> Staging {
        self.0.staging()
    }

    fn staged(&self, retry: u32, at: At<'_>, leaf: &mut Leaf<'_>) -> Option<Duration> {
        self.0.staged(retry, at, leaf)
    }
}

/// A text [`Policy::parse`] refused: every mistake, each with the
/// attribute's message and the byte range of the text it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(backoff_schedule::Errors);

impl ParseError {
    /// Every mistake: its byte range and its message, in the attribute's
    /// order (the first is the one [`Display`](fmt::Display) shows first).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    ///
    /// let error = Policy::parse(r#"linear(base = "0s"), attempts = 0"#).unwrap_err();
    /// let all: Vec<_> = error.errors().collect();
    /// assert_eq!(all[0].0, 14..18);
    /// assert!(all[1].1.starts_with("`attempts = 0` would never call the function"));
    /// ```
    pub fn errors(&self) -> impl Iterator<Item = (Range<usize>, &str)> {
        self.0
            .errors()
            .iter()
            .map(|e| (e.span().start..e.span().end, e.message()))
    }
}

/// The messages, one a line.
impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for ParseError {}

impl Policy<DynStrategy> {
    /// Reads a schedule from text, in the attribute's words: the policy,
    /// or every mistake with the attribute's message and its byte range.
    /// Parsing takes microseconds (see `docs/performance.md`); parse once
    /// and keep the policy.
    ///
    /// A text is what the attribute's parentheses hold, without the arguments
    /// that need code (`when`, `on(..)`, hooks, `policy`, `timeout`, ...): a
    /// strategy, composed or not, and `attempts`, `jitter`, `max_elapsed`,
    /// `stop_at_delay`, `on_deadline` and `retry_after_max`. For the same text,
    /// the policy gives the delays the attribute gives: the same strategy, the
    /// same default jitter, the same attempt count for `stop_at_delay`.
    ///
    /// ```
    /// use backoff_runtime::{DynPolicy, Jitter, Policy};
    /// use std::time::Duration;
    ///
    /// // From an environment variable, a file, a flag; here, a string.
    /// let text = r#"exponential(base = "100ms", max = "1s"), attempts = 6, jitter = "none""#;
    /// let policy: DynPolicy = Policy::parse(text).unwrap();
    /// let ms: Vec<u128> = policy.delays().map(|d| d.as_millis()).collect();
    /// assert_eq!(ms, [100, 200, 400, 800, 1000]);
    ///
    /// // The attribute's message, and the bytes it is about.
    /// let error = "exponential(base = \"1s\"), atempts = 5".parse::<DynPolicy>().unwrap_err();
    /// assert_eq!(error.to_string(), "unknown argument `atempts`; did you mean `attempts`?");
    /// assert_eq!(error.errors().next().unwrap().0, 26..33);
    /// ```
    ///
    /// Any text is an `Ok` or an `Err`, never a panic: an empty one is the
    /// default policy (exponential from 100 ms, capped at 10 s, full jitter,
    /// 3 attempts), and parentheses nest at most 64 levels.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    ///
    /// let text = r#"chain(constant("1s", times = 2), constant("1m")), attempts = 5, jitter = "none""#;
    /// let policy = Policy::parse(text).unwrap();
    /// let secs: Vec<u64> = policy.delays().map(|d| d.as_secs()).collect();
    /// assert_eq!(secs, [1, 1, 60, 60]);
    /// ```
    pub fn parse(text: &str) -> Result<DynPolicy, ParseError> {
        // (The policy the attribute builds for the same schedule.)
        let s = backoff_schedule::parse(text).map_err(ParseError)?;
        let mut policy =
            Policy::from_strategy(strategy(s.strategy.as_ref())).jitter(jitter(&s.jitter()));
        let (limit, stop) = s.stop_rule();
        policy = match limit {
            Some(Attempts::Limited(n)) => policy.attempts(saturate(n)),
            Some(Attempts::Unlimited) => policy.unlimited_attempts(),
            None => policy,
        };
        let settings = &mut policy.settings;
        settings.stop_at = stop;
        settings.max_elapsed = s.max_elapsed;
        settings.retry_after_max = s.retry_after_max.unwrap_or(settings.retry_after_max);
        if s.on_deadline == Some(true) {
            settings.on_deadline = OnDeadline::LastTry;
        }
        Ok(policy)
    }
}

impl FromStr for Policy<DynStrategy> {
    type Err = ParseError;

    /// [`Policy::parse`].
    fn from_str(text: &str) -> Result<Self, ParseError> {
        Policy::parse(text)
    }
}

/// With feature `serde`: a [`DynPolicy`] from a string, read by
/// [`Policy::parse`]; a bad text is the deserializer's error, with the
/// attribute's message.
#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Policy<DynStrategy> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = DynPolicy;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a retry schedule, as in `exponential(base = \"100ms\"), attempts = 5`")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<DynPolicy, E> {
                Policy::parse(text).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Text)
    }
}

/// A jitter of the text (a text names no `static`: refused when parsed).
fn jitter(kind: &JitterKind) -> Jitter {
    match *kind {
        JitterKind::Full => Jitter::Full,
        JitterKind::Equal => Jitter::Equal,
        JitterKind::Spread => Jitter::Spread,
        JitterKind::Scattered(r) => Jitter::Scattered(r),
        // (`f32` in the runtime; the checks made sure both fit. `+ 0.0`
        // makes `-0` a `0`, as the attribute writes it.)
        #[allow(clippy::cast_possible_truncation)]
        JitterKind::Range(lo, hi) => Jitter::Range(lo as f32 + 0.0, hi as f32 + 0.0),
        _ => Jitter::None,
    }
}

/// The strategy (default: exponential), as the attribute builds it: what
/// is not given keeps the runtime's default; a `constant` stage is capped
/// at its delay; more than two stages nest to the right.
fn strategy(s: Option<&backoff_schedule::Strategy>) -> DynStrategy {
    let kind = s.map_or(StrategyKind::Exponential, |s| s.kind);
    let base = s
        .and_then(|s| s.base.as_ref())
        .map_or(backoff_schedule::Strategy::default_base(kind), |b| b.value);
    let max = s.and_then(|s| s.max.as_ref()).map(|m| m.value);
    // (`.max_delay(max)` where given.)
    macro_rules! capped {
        ($s:expr) => {{
            let s = $s;
            DynStrategy::new(match max {
                Some(m) => s.max_delay(m),
                None => s,
            })
        }};
    }
    match (kind, s) {
        (StrategyKind::Linear, _) => capped!(Linear::new(base)),
        (StrategyKind::Fibonacci, _) => capped!(Fibonacci::new(base)),
        (StrategyKind::Decorrelated, _) => capped!(Decorrelated::new(base)),
        (StrategyKind::Sidekiq, _) => capped!(Sidekiq::new().unit(base)),
        (StrategyKind::Buckets, _) => capped!(Buckets::new().unit(base)),
        (StrategyKind::Immediate, _) => DynStrategy::new(Immediate),
        // (A stage's cap is its delay.)
        (StrategyKind::Constant, Some(s)) if s.nested => {
            DynStrategy::new(Constant::new(base).max_delay(base))
        }
        (StrategyKind::Constant, _) => DynStrategy::new(Constant::new(base)),
        (StrategyKind::Steps, Some(s)) => {
            DynStrategy::new(OwnedSteps(s.steps.iter().map(|d| d.value).collect()))
        }
        (
            StrategyKind::Chain | StrategyKind::Shorter | StrategyKind::Longer | StrategyKind::Sum,
            Some(s),
        ) => {
            let chain = kind == StrategyKind::Chain;
            // (A side of `shorter`/`longer` that ends by itself.)
            let side = |stage: &backoff_schedule::Strategy| {
                let s = strategy(Some(stage));
                match (&stage.lasting, &stage.times) {
                    _ if chain => s,
                    (Some(d), _) => DynStrategy::new(Stage::lasting(s, d.value)),
                    (None, Some(t)) => DynStrategy::new(Stage::times(s, saturate(t.value))),
                    (None, None) => s,
                }
            };
            let mut stages = s.stages.iter().rev();
            let mut acc = stages.next().map_or_else(|| strategy(None), side);
            for stage in stages {
                let a = side(stage);
                acc = match (kind, &stage.lasting) {
                    (StrategyKind::Chain, Some(d)) => {
                        DynStrategy::new(Chain::lasting(a, d.value, acc))
                    }
                    (StrategyKind::Chain, None) => {
                        let times = stage.times.as_ref().map_or(0, |t| t.value);
                        DynStrategy::new(Chain::new(a, saturate(times), acc))
                    }
                    (StrategyKind::Shorter, _) => DynStrategy::new(Shorter::new(a, acc)),
                    (StrategyKind::Longer, _) => DynStrategy::new(Longer::new(a, acc)),
                    _ => DynStrategy::new(Sum::new(a, acc)),
                };
            }
            acc
        }
        _ => {
            let mut e = Exponential::new(base);
            if let Some(f) = s.and_then(|s| s.factor.as_ref()) {
                e = e.factor(f.value);
            }
            capped!(e)
        }
    }
}

/// A count written as a `u64`, saturated to the runtime's `u32`.
fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `steps(..)` over delays of its own (the runtime's [`Steps`](crate::strategy::Steps)
/// borrows a `'static` list): the same delays.
struct OwnedSteps(Box<[Duration]>);

impl Strategy for OwnedSteps {
    fn delay(&self, retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
        let index = usize::try_from(retry.saturating_sub(1)).unwrap_or(usize::MAX);
        self.0
            .get(index)
            .or(self.0.last())
            .copied()
            .unwrap_or_default()
    }

    fn max_delay(&self) -> Duration {
        self.0.iter().copied().max().unwrap_or_default()
    }

    fn reads_previous(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    //! Fuzzing `Policy::parse`: the schedule grammar mixed with mutations
    //! (truncations, insertions of hostile characters, deletions,
    //! repetitions, swaps: `backoff_schedule::fuzz`, the expansion's fuzz
    //! pass's generator too), plus empty, 1 MB and deeply nested texts. It never
    //! panics; an `Err`'s spans lie on the text's character boundaries; an
    //! `Ok`'s policy computes its delays without panicking.
    //!
    //! `cargo test -p backoff-runtime --lib parse` runs a bounded pass (set
    //! `BACKOFF_FUZZ_CASES`, default 3,000); a long run:
    //! `BACKOFF_FUZZ_CASES=1000000 cargo test --release -p backoff-runtime --lib fuzz_parse`.

    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    use super::{Duration, Policy};
    use crate::strategy::Strategy as _;

    const FRAGMENTS: &[&str] = &[
        "exponential",
        "exponential(base = \"100ms\", factor = 2, max = \"5s\")",
        "exponential(factor = 1e400)",
        "exponential(base = 100)",
        "exponential(bse = \"1s\")",
        "exponential = \"1s\"",
        "chain(exponential(times = 3), constant(\"1m\"))",
        "chain(exponential(times = 0), sum(immediate, steps(), times = 2), decorrelated)",
        "chain(linear(times = 99999999999999999999), fibonacci)",
        "chain(constant(\"1s\", for = \"3s\"), constant(\"1m\"))",
        "steps(\"1s\", \"5s\", \"30s\")",
        "steps(1, \"x\", times = 2)",
        "shorter(exponential(base = \"1s\"), linear(base = \"3s\", jitter = \"full\"))",
        "longer(decorrelated, sum(constant(\"1s\"), sidekiq))",
        "sum(constant(\"3m\"), exponential(base = \"2m\", max = \"1h\"))",
        "sum(sum(sum(immediate, immediate), immediate), immediate)",
        "sidekiq(unit = \"1ms\", max = \"1h\")",
        "buckets(unit = \"0s\")",
        "union(immediate, immediate)",
        "and_then(",
        "stop_at_delay = \"10s\"",
        "stop_at_delay = \"0s\"",
        "on_deadline = \"last_try\"",
        "on_deadline = \"never\"",
        "jitter = range(0.5, 1.5)",
        "jitter = range(-0, 1e999)",
        "jitter = scattered(0.25)",
        "jitter = \"spread\"",
        "jitter = SLOW",
        "jitter = Jitter::Full",
        "constant(\"1s\")",
        "constant(\"1s\", \"2s\")",
        "decorrelated(base = \"5ms\", max = \"2s\")",
        "immediate(base = \"1s\")",
        "attempts = 5",
        "attempts = 0",
        "attempts = 4294967296",
        "attempts = unlimited",
        "attempts = \"3\"",
        "attempts = -1",
        "max_elapsed = \"30s\"",
        "max_elapsed = Duration::from_secs(2)",
        "max_elapsed = \"1h 30m\"",
        "max_elapsed = \"18446744073709551616s\"",
        "retry_after_max = \"1m\"",
        "retries = 3",
        "when = is_transient",
        "on_give_up = |_, _| ()",
        "r#attempts = 2",
        "",
        ",",
        "= = =",
    ];

    const HOSTILE: &[&str] = &[
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "\"",
        "\\",
        ",",
        "=",
        ":",
        "::",
        "-",
        "r#",
        "'",
        "é",
        "µs",
        "日本",
        "\u{0}",
        "\u{202e}",
        "\u{1f600}",
        "1e999",
        "0x1F",
        "1.",
        ".5",
        "\n",
        "/*",
        "//",
    ];

    fn text() -> impl proptest::strategy::Strategy<Value = String> {
        prop_oneof![
            3 => backoff_schedule::fuzz::texts(FRAGMENTS, 0..5, HOSTILE, 50),
            1 => ".{0,200}",
        ]
    }

    /// Parses `text`: `Ok(true)` when it was accepted; an `Err` says what
    /// was wrong with the outcome.
    fn check(text: &str) -> Result<bool, String> {
        match Policy::parse(text) {
            Ok(policy) => {
                for k in [1, 2, 3, 10, 100, 1_000, u32::MAX] {
                    let _ = policy.strategy().central_delay(k);
                    let _ = policy.delay_for(k, u64::from(k));
                }
                let _ = policy.clone().seed(1).delays().take(64).count();
                Ok(true)
            }
            Err(e) => {
                for (span, message) in e.errors() {
                    if message.is_empty()
                        || text.get(span.clone()).is_none()
                        || span.start > span.end
                    {
                        return Err(format!("{span:?} {message:?}"));
                    }
                }
                Ok(false)
            }
        }
    }

    fn cases() -> u32 {
        std::env::var("BACKOFF_FUZZ_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(3_000)
    }

    #[test]
    fn fuzz_parse_never_panics_and_spans_the_text() {
        let mut runner = TestRunner::new(Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        });
        let accepted = std::cell::Cell::new(0u32);
        let result = runner.run(&text(), |text| {
            match std::panic::catch_unwind(|| check(&text)) {
                Err(_) => Err(TestCaseError::fail(format!(
                    "Policy::parse panicked on {text:?}"
                ))),
                Ok(Err(e)) => Err(TestCaseError::fail(format!("{text:?}: {e}"))),
                Ok(Ok(ok)) => {
                    accepted.set(accepted.get() + u32::from(ok));
                    Ok(())
                }
            }
        });
        eprintln!("fuzz: {} cases, {} accepted", cases(), accepted.get());
        result.unwrap();
        assert!(accepted.get() > 0 && accepted.get() < cases());
    }

    #[test]
    fn empty_huge_and_deep_texts_are_answered() {
        assert_eq!(check(""), Ok(true));
        assert_eq!(check("  \n\t "), Ok(true));
        let mb = 1 << 20;
        let texts = [
            "chain(".repeat(mb / 6),
            "(".repeat(mb),
            ")".repeat(mb),
            "\"".repeat(mb),
            "a".repeat(mb),
            "exponential, ".repeat(mb / 13),
            "attempts = 5, ".repeat(mb / 14),
            format!("steps({})", "\"1s\", ".repeat(mb / 6)),
            format!("jitter = \"{}\"", "é".repeat(mb / 2)),
            "日本".repeat(mb / 6),
            "1".repeat(mb),
            ",".repeat(mb),
        ];
        for text in &texts {
            assert!(check(text).is_ok(), "{}", &text[..40]);
        }
        let deep = Policy::parse(&"chain(".repeat(100)).unwrap_err();
        assert_eq!(deep.to_string(), "groups nest deeper than 64 levels");
        // The longest list of delays is accepted, as written.
        let steps = format!("steps({}\"2s\")", "\"1s\", ".repeat(mb / 6));
        assert_eq!(
            Policy::parse(&steps).unwrap().strategy().max_delay(),
            Duration::from_secs(2)
        );
    }
}
