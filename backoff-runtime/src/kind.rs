use core::fmt;

use crate::jitter::Jitter;
use crate::policy::Policy;
use crate::strategy::{Builtin, Strategy};

/// The most kinds a [`Policy`] distinguishes: the first `MAX_KINDS` entries
/// of [`Policy::kinds`] are used (the attribute refuses more `on(..)` arms
/// when the code compiles). The state of a call keeps a retry count and a
/// previous delay per kind, without allocating.
#[cfg(feature = "std")] // (read by the state, which needs std)
pub(crate) const MAX_KINDS: usize = 8;

/// The largest attempt limit of one kind: [`Kind::new`] takes a larger
/// limit as this one (the attribute refuses a larger `attempts` in an
/// `on(..)` arm). An unlimited kind has no such bound: its schedule keeps
/// advancing, to its `max`, however many failures of the kind a call has.
pub(crate) const MAX_KIND_ATTEMPTS: u32 = 255;

/// One kind of failure: its name (what [`GiveUp`](crate::GiveUp) and
/// [`RetryEvent`](crate::RetryEvent) report, for the attribute the text of
/// the `on(..)` arm's pattern), and either a schedule of its own
/// ([`Kind::new`]) or none ([`Kind::named`]).
///
/// Each kind counts its own retries: the k-th retry after a failure of a
/// kind waits that kind's delay k, whatever other kinds came between, and
/// the kind's attempt limit ends the call at its n-th failure of that kind
/// (reason [`Attempts`](crate::GiveUpReason::Attempts)).
///
/// `#[retry(when = classify, on(Failure::Transient, ..), on(..))]` builds
/// such a table, one entry per `on(..)` arm in the order written, and
/// turns `classify`'s value into [`Decision::Kind`](crate::Decision::Kind)
/// or [`Decision::KindAfter`](crate::Decision::KindAfter) with a `match`
/// over the arms' patterns.
///
/// A policy's [`throttled`](crate::Policy::throttled) schedule is a kind
/// too, named `"throttled"` ([`Policy::throttled_kind`](crate::Policy::throttled_kind)
/// takes any): a [`Decision::Throttled`](crate::Decision::Throttled) is
/// stepped as a kind's failure, and the policy's own attempt limit counts
/// the other failures alone.
///
/// # Examples
///
/// ```
/// use backoff_runtime::{Decision, GiveUpReason, Jitter, Policy, Kind};
/// use std::time::Duration;
///
/// use Duration as D;
/// static KINDS: [Kind; 3] = [
///     Kind::new("transient", Policy::exponential(D::from_millis(100)).jitter(Jitter::None).attempts(5)),
///     Kind::new("throttled", Policy::constant(D::from_millis(500)).jitter(Jitter::None).attempts(10)),
///     Kind::named("permanent"),
/// ];
/// static POLICY: Policy = Policy::immediate().unlimited_attempts().kinds(&KINDS);
///
/// let mut state = POLICY.start();
/// assert_eq!(state.next_delay_for(Decision::Kind(0)), Some(D::from_millis(100)));
/// assert_eq!(state.next_delay_for(Decision::Kind(1)), Some(D::from_millis(500)));
/// // The second transient failure: the transient schedule's second delay.
/// assert_eq!(state.next_delay_for(Decision::Kind(0)), Some(D::from_millis(200)));
/// // A kind without a schedule stops the call.
/// assert_eq!(state.next_delay_for(Decision::Kind(2)), None);
/// let report = state.give_up().unwrap();
/// assert_eq!(report.reason, GiveUpReason::Stopped);
/// assert_eq!(report.failure_kind, Some("permanent"));
/// ```
///
/// Equal kinds have the same name and schedule (a strategy in a `static`
/// policy: the same `static`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Kind {
    name: &'static str,
    schedule: Option<Schedule>,
}

/// A kind's schedule: a builtin strategy held by value ([`Kind::new`]) or
/// any strategy in a `static` policy ([`Kind::of`]), with its jitter and
/// attempt limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Schedule {
    pub(crate) strategy: Held,
    pub(crate) jitter: Jitter,
    pub(crate) attempts: Option<u32>,
}

/// Where a kind's strategy is.
#[derive(Clone, Copy)]
pub(crate) enum Held {
    Builtin(Builtin),
    Static(&'static (dyn Strategy + Sync)),
}

impl fmt::Debug for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Held::Builtin(b) => b.fmt(f),
            Held::Static(_) => f.write_str("static"),
        }
    }
}

/// The same builtin, or the same `static`.
impl PartialEq for Held {
    fn eq(&self, other: &Held) -> bool {
        match (self, other) {
            (Held::Builtin(x), Held::Builtin(y)) => x == y,
            (Held::Static(x), Held::Static(y)) => core::ptr::addr_eq(*x, *y),
            _ => false,
        }
    }
}

impl Kind {
    /// A kind retried on `schedule`'s strategy, jitter and attempt limit
    /// (only those three settings of `schedule` are used; its attempt limit
    /// counts this kind's failures alone, and is at most
    /// 255).
    ///
    /// ```
    /// use backoff_runtime::{Policy, Kind};
    /// use std::time::Duration;
    ///
    /// const CONFLICT: Kind = Kind::new("conflict", Policy::immediate().attempts(20));
    /// assert_eq!(CONFLICT.name(), "conflict");
    /// ```
    pub const fn new(name: &'static str, schedule: Policy) -> Kind {
        Kind::scheduled(name, Held::Builtin(*schedule.strategy()), &schedule)
    }

    /// A kind retried on the strategy, jitter and attempt limit of a
    /// policy in a `static`, any strategy: a composed one
    /// ([`Chain`](crate::strategy::Chain), [`Sum`](crate::strategy::Sum),
    /// ..), [`Sidekiq`](crate::strategy::Sidekiq), one of your own. What
    /// `on(PATTERN, chain(..))` builds.
    ///
    /// ```
    /// use backoff_runtime::strategy::{Chain, Constant, Immediate};
    /// use backoff_runtime::{Decision, Jitter, Policy, Kind};
    /// use std::time::Duration;
    ///
    /// // Twice at once, then every second, 5 failures of this kind at most.
    /// static CONFLICTS: Policy<Chain<Immediate, Constant>> = Policy::from_strategy(Chain::new(
    ///     Immediate,
    ///     2,
    ///     Constant::new(Duration::from_secs(1)),
    /// ))
    /// .jitter(Jitter::None)
    /// .attempts(5);
    /// static KINDS: [Kind; 1] = [Kind::of("conflict", &CONFLICTS)];
    /// static POLICY: Policy = Policy::immediate().unlimited_attempts().kinds(&KINDS);
    ///
    /// let mut state = POLICY.start();
    /// let waits: Vec<_> = std::iter::from_fn(|| state.next_delay_for(Decision::Kind(0))).collect();
    /// assert_eq!(waits, [Duration::ZERO, Duration::ZERO, Duration::from_secs(1), Duration::from_secs(1)]);
    /// ```
    pub const fn of<S: Strategy + Sync + 'static>(
        name: &'static str,
        policy: &'static Policy<S>,
    ) -> Kind {
        Kind::scheduled(name, Held::Static(policy.strategy()), policy)
    }

    /// A kind retried on `strategy` with `policy`'s jitter and attempt
    /// limit, within what a call counts.
    const fn scheduled<S>(name: &'static str, strategy: Held, policy: &Policy<S>) -> Kind {
        let attempts = match policy.attempt_limit() {
            Some(n) if n > MAX_KIND_ATTEMPTS => Some(MAX_KIND_ATTEMPTS),
            limit => limit,
        };
        Kind {
            name,
            schedule: Some(Schedule {
                strategy,
                jitter: policy.jitter_kind(),
                attempts,
            }),
        }
    }

    /// A kind without a schedule of its own:
    /// [`Decision::Kind`](crate::Decision::Kind) gives up at once (reason
    /// [`Stopped`](crate::GiveUpReason::Stopped)), and
    /// [`Decision::KindAfter`](crate::Decision::KindAfter) waits the
    /// duration it carries (as [`Decision::RetryAfter`](crate::Decision::RetryAfter)).
    /// The attribute's `on(PATTERN, stop)` and `on(PATTERN, after = EXPR)`.
    ///
    /// ```
    /// use backoff_runtime::{Decision, Policy, Kind};
    /// use std::time::Duration;
    ///
    /// static KINDS: [Kind; 1] = [Kind::named("retry_after")];
    /// static POLICY: Policy = Policy::immediate().unlimited_attempts().kinds(&KINDS);
    /// let mut state = POLICY.start();
    /// let wait = Duration::from_secs(2);
    /// assert_eq!(state.next_delay_for(Decision::KindAfter(0, wait)), Some(wait));
    /// assert_eq!(state.event(wait).failure_kind, Some("retry_after"));
    /// ```
    pub const fn named(name: &'static str) -> Kind {
        Kind {
            name,
            schedule: None,
        }
    }

    /// The kind's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The kind's attempt limit, counted over its own failures: a kind
    /// without a schedule ends the call at its first (`None`: unlimited).
    pub(crate) const fn limit(&self) -> Option<u32> {
        match &self.schedule {
            Some(s) => s.attempts,
            None => Some(1),
        }
    }

    /// The kind's schedule, if it has one.
    #[cfg(feature = "std")]
    pub(crate) const fn schedule(&self) -> Option<&Schedule> {
        self.schedule.as_ref()
    }
}

/// What a call's state counts for each kind: its failures so far (so the
/// retry number of its schedule), saturating at `u32::MAX` (so an
/// unlimited kind's schedule keeps advancing): the policy's `MAX_KINDS` kinds, and in the
/// last place, [`THROTTLED_SLOT`], its throttled kind. (A kind's
/// `decorrelated` schedule reads the state's one previous delay, which
/// every schedule of the call besides the main one shares.)
#[cfg(feature = "std")]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tally {
    failures: [u32; MAX_KINDS + 1],
}

/// The [`Tally`] place of a policy's throttled kind
/// ([`Policy::throttled`](crate::Policy::throttled)), after its table's.
#[cfg(feature = "std")]
pub(crate) const THROTTLED_SLOT: usize = MAX_KINDS;

#[cfg(feature = "std")]
impl Tally {
    /// Counts a failure of kind `index` (at most [`THROTTLED_SLOT`]): its number
    /// among that kind's failures.
    pub(crate) fn count(&mut self, index: usize) -> u32 {
        self.failures.get_mut(index).map_or(1, |n| {
            *n = n.saturating_add(1);
            *n
        })
    }

    /// The failures of kind `index` counted so far (0 out of range).
    pub(crate) fn failures(&self, index: usize) -> u32 {
        self.failures.get(index).copied().unwrap_or(0)
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use crate::{Decision, GiveUpReason, Jitter};
    use core::time::Duration;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// A `decorrelated` kind reads its own previous delay, not the one of
    /// the kind that came between: each of its delays lies within
    /// [base, 3 · its previous], while the other kind's are far larger.
    #[test]
    fn a_decorrelated_kind_keeps_its_own_previous_delay() {
        static KINDS: [Kind; 2] = [
            Kind::new(
                "small",
                Policy::decorrelated(Duration::from_millis(10))
                    .max_delay(Duration::from_secs(100))
                    .unlimited_attempts(),
            ),
            Kind::new(
                "large",
                Policy::constant(Duration::from_secs(50))
                    .jitter(Jitter::None)
                    .unlimited_attempts(),
            ),
        ];
        static POLICY: Policy = Policy::immediate()
            .unlimited_attempts()
            .kinds(&KINDS)
            .seed(7);
        let mut state = POLICY.start();
        let mut previous = MS(10);
        for _ in 0..200 {
            let d = state.next_delay_for(Decision::Kind(0)).unwrap();
            assert!(d >= MS(10) && d <= previous * 3, "{d:?} after {previous:?}");
            previous = d;
            assert_eq!(state.next_delay_for(Decision::Kind(1)), Some(MS(50_000)));
        }
    }

    /// A verdict naming no kind (past the table, or past `MAX_KINDS`) is a
    /// plain retry on the main schedule; a `KindAfter` naming none is a
    /// `RetryAfter`, and neither reports a kind.
    #[test]
    fn a_verdict_naming_no_kind_is_a_plain_retry() {
        static KINDS: [Kind; 1] = [Kind::named("stop")];
        static POLICY: Policy = Policy::linear(Duration::from_millis(10))
            .jitter(Jitter::None)
            .attempts(4)
            .kinds(&KINDS);
        let mut state = POLICY.start();
        assert_eq!(state.next_delay_for(Decision::Kind(1)), Some(MS(10)));
        assert_eq!(state.failure_kind(), None);
        assert_eq!(
            state.next_delay_for(Decision::KindAfter(200, MS(3))),
            Some(MS(3))
        );
        assert_eq!(state.next_delay_for(Decision::Kind(9)), Some(MS(20)));
        // The policy's own limit: four calls.
        assert_eq!(state.next_delay_for(Decision::Kind(1)), None);
        assert_eq!(state.give_up_reason(), Some(GiveUpReason::Attempts));
        assert_eq!(state.give_up().unwrap().failure_kind, None);
    }

    /// A kind that stops is the service's answer, as a `Stop` is: the
    /// breaker hears a success; a kind retried is a failure.
    #[test]
    fn a_kind_that_stops_is_an_answer_for_the_breaker() {
        use crate::{CircuitBreaker, CircuitState};
        static KINDS: [Kind; 2] = [
            Kind::named("permanent"),
            Kind::new("transient", Policy::immediate()),
        ];
        static POLICY: Policy = Policy::immediate().kinds(&KINDS);
        static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(60));
        let mut state = POLICY.start().with_circuit(&BREAKER);
        state.before_attempt().unwrap();
        assert_eq!(state.next_delay_for(Decision::Kind(0)), None);
        assert_eq!(BREAKER.state(), CircuitState::Closed);
        let mut state = POLICY.start().with_circuit(&BREAKER);
        state.before_attempt().unwrap();
        assert_eq!(
            state.next_delay_for(Decision::Kind(1)),
            None,
            "the breaker opened"
        );
        assert_eq!(BREAKER.state(), CircuitState::Open);
    }

    #[test]
    fn the_tally_counts_each_kind_and_saturates_at_u32_max() {
        let mut tally = Tally::default();
        assert_eq!(tally.count(3), 1);
        assert_eq!(tally.count(3), 2);
        assert_eq!(tally.count(0), 1, "each kind its own count");
        for _ in 0..300 {
            tally.count(5);
        }
        assert_eq!(tally.count(5), 301, "past what a kind's limit may be");
        tally.failures[5] = u32::MAX;
        assert_eq!(tally.count(5), u32::MAX);
        assert_eq!(
            tally.count(THROTTLED_SLOT),
            1,
            "the throttled kind's own place"
        );
        assert_eq!(tally.count(MAX_KINDS + 1), 1, "out of range counts nothing");
        assert_eq!(tally.failures(MAX_KINDS + 1), 0);
    }

    /// A limit above what a call counts is taken as the largest.
    #[test]
    fn a_kinds_limit_is_at_most_what_a_call_counts() {
        static KINDS: [Kind; 1] = [Kind::new("busy", Policy::immediate().attempts(1_000))];
        static POLICY: Policy = Policy::immediate().unlimited_attempts().kinds(&KINDS);
        let mut state = POLICY.start();
        let retries = (0..2_000)
            .take_while(|_| state.next_delay_for(Decision::Kind(0)).is_some())
            .count();
        assert_eq!(retries as u32, MAX_KIND_ATTEMPTS - 1);
    }
}
