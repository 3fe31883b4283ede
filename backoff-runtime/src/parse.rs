//! Policies from configuration: [`Policy::parse`] reads the schedule part
//! of the `#[retry]` attribute's arguments from text, with the attribute's
//! parser, checks and messages, into a [`DynPolicy`].
//!
//! A text is what the attribute's parentheses hold, without the arguments
//! that need code (`when`, `on(..)`, hooks, `policy`, `timeout`, ...): a
//! strategy, composed or not, and `attempts`, `jitter`, `max_elapsed`,
//! `stop_at_delay`, `on_deadline` and `retry_after_max`. For the same text,
//! the policy gives the delays the attribute gives: the same strategy, the
//! same default jitter, the same attempt count for `stop_at_delay`.
//!
//! ```
//! use backoff_runtime::{DynPolicy, Jitter, Policy};
//! use std::time::Duration;
//!
//! // From an environment variable, a file, a flag; here, a string.
//! let text = r#"exponential(base = "100ms", max = "1s"), attempts = 6, jitter = "none""#;
//! let policy: DynPolicy = Policy::parse(text).unwrap();
//! let ms: Vec<u128> = policy.delays().map(|d| d.as_millis()).collect();
//! assert_eq!(ms, [100, 200, 400, 800, 1000]);
//!
//! // The attribute's message, and the bytes it is about.
//! let error = "exponential(base = \"1s\"), atempts = 5".parse::<DynPolicy>().unwrap_err();
//! assert_eq!(error.to_string(), "unknown argument `atempts`; did you mean `attempts`?");
//! assert_eq!(error.span(), 26..33);
//! ```
//!
//! Any text is an `Ok` or an `Err`, never a panic: an empty one is the
//! default policy (exponential from 100 ms, capped at 10 s, full jitter,
//! 3 attempts), and parentheses nest at most 64 levels.

use core::fmt;
use core::ops::Range;
use core::str::FromStr;
use core::time::Duration;
use std::sync::Arc;

use backoff_schedule::{Attempts, JitterKind, Schedule, StrategyKind};

use crate::jitter::{Jitter, JitterRng};
use crate::policy::{OnDeadline, Policy};
use crate::strategy::{
    Buckets, Chain, Constant, Decorrelated, Exponential, Fibonacci, Immediate, Linear, Longer,
    Shorter, Sidekiq, Strategy, Sum,
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
    ///
    /// ```
    /// use backoff_runtime::{Strategy, parse::DynStrategy, strategy::Linear};
    /// use std::time::Duration;
    ///
    /// let s = DynStrategy::new(Linear::new(Duration::from_secs(1)));
    /// assert_eq!(s.central_delay(3), Duration::from_secs(3));
    /// ```
    pub fn new<S: Strategy + Send + Sync + 'static>(strategy: S) -> DynStrategy {
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

impl Strategy for DynStrategy {
    fn delay(&self, retry: u32, previous: Option<Duration>, rng: &mut JitterRng) -> Duration {
        self.0.delay(retry, previous, rng)
    }

    fn max_delay(&self) -> Duration {
        self.0.max_delay()
    }

    fn central_delay(&self, retry: u32) -> Duration {
        self.0.central_delay(retry)
    }

    fn capped_delay(
        &self,
        retry: u32,
        previous: Option<Duration>,
        rng: &mut JitterRng,
    ) -> Duration {
        self.0.capped_delay(retry, previous, rng)
    }

    fn reads_previous(&self) -> bool {
        self.0.reads_previous()
    }
}

/// A text [`Policy::parse`] refused: every mistake, each with the
/// attribute's message and the byte range of the text it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(backoff_schedule::Errors);

impl ParseError {
    /// The first mistake's byte range in the text.
    pub fn span(&self) -> Range<usize> {
        self.errors().next().map_or(0..0, |(span, _)| span)
    }

    /// Every mistake: its byte range and its message, in the attribute's
    /// order.
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
    /// Reads a schedule from text, in the attribute's words (see the
    /// [module](crate::parse)): the policy, or every mistake with the
    /// attribute's message and its byte range. Parsing takes microseconds
    /// (see `docs/performance.md`); parse once and keep the policy.
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
        backoff_schedule::parse(text)
            .map(|s| from_schedule(&s))
            .map_err(ParseError)
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

/// The policy the attribute builds for `s`.
fn from_schedule(s: &Schedule) -> DynPolicy {
    let mut policy = Policy::from_strategy(strategy(s.strategy.as_ref())).jitter(jitter(&s.jitter()));
    let (limit, stop) = s.stop_rule();
    policy = match limit {
        Some(Attempts::Limited(n)) => policy.attempts(u32::try_from(n).unwrap_or(u32::MAX)),
        Some(Attempts::Unlimited) => policy.unlimited_attempts(),
        None => policy,
    };
    if let Some(d) = stop {
        policy = policy.stop_at_delay(d);
    }
    if let Some(d) = s.max_elapsed {
        policy = policy.max_elapsed(d);
    }
    if let Some(d) = s.retry_after_max {
        policy = policy.retry_after_max(d);
    }
    if s.on_deadline == Some(true) {
        policy = policy.on_deadline(OnDeadline::LastTry);
    }
    policy
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
        (StrategyKind::Chain | StrategyKind::Shorter | StrategyKind::Longer | StrategyKind::Sum, Some(s)) => {
            let mut stages = s.stages.iter().rev();
            let mut acc = strategy(stages.next());
            for stage in stages {
                let a = strategy(Some(stage));
                acc = match kind {
                    StrategyKind::Chain => {
                        let times = stage.times.as_ref().map_or(0, |t| t.value);
                        DynStrategy::new(Chain::new(a, u32::try_from(times).unwrap_or(u32::MAX), acc))
                    }
                    StrategyKind::Shorter => DynStrategy::new(Shorter::new(a, acc)),
                    StrategyKind::Longer => DynStrategy::new(Longer::new(a, acc)),
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

/// `steps(..)` over delays of its own (the runtime's [`Steps`](crate::strategy::Steps)
/// borrows a `'static` list): the same delays.
struct OwnedSteps(Box<[Duration]>);

impl Strategy for OwnedSteps {
    fn delay(&self, retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
        let index = usize::try_from(retry.saturating_sub(1)).unwrap_or(usize::MAX);
        self.0.get(index).or(self.0.last()).copied().unwrap_or_default()
    }

    fn max_delay(&self) -> Duration {
        self.0.iter().copied().max().unwrap_or_default()
    }

    fn reads_previous(&self) -> bool {
        false
    }
}
