//! [`Policy`]: a strategy plus jitter and stop conditions, built once and
//! used for any number of calls.

use core::time::Duration;

use crate::jitter::{Jitter, JitterRng, Jitterer};
use crate::kind::Kind;
use crate::strategy::{
    Builtin, Constant, Decorrelated, Exponential, Fibonacci, Immediate, Linear, Strategy,
};

/// The default attempt limit: three calls in all, the first included.
pub(crate) const DEFAULT_ATTEMPTS: u32 = 3;

/// The default bound on one [`Decision::RetryAfter`](crate::Decision::RetryAfter)
/// wait: five minutes. See [`Policy::retry_after_max`].
pub(crate) const DEFAULT_RETRY_AFTER_MAX: Duration = Duration::from_secs(5 * 60);

/// How to retry: a strategy, jitter, an attempt limit and an optional
/// deadline.
///
/// Build it with a constructor and `const fn` setters (so it can live in a
/// `const` or `static`), then use it for any number of calls: [`delays`]
/// lists the schedule, [`retry`] and [`retry_async`] run a loop, and
/// [`start`] hands you the state machine for a loop you write yourself.
///
/// [`delays`]: Policy::delays
/// [`retry`]: Policy::retry
/// [`retry_async`]: Policy::retry_async
/// [`start`]: Policy::start
///
/// # Default
///
/// `Policy::default()` is what `#[retry]` uses with no arguments:
/// exponential from 100 ms, factor 2, max 10 s, full jitter, 3 attempts, no
/// deadline. Every constructor starts from 3 attempts, no deadline, and full
/// jitter (no jitter for [`decorrelated`](Policy::decorrelated) and
/// [`immediate`](Policy::immediate), and for
/// [`from_strategy`](Policy::from_strategy)).
///
/// # Invalid input
///
/// Setters never panic. A factor that is not finite or not above 1 is
/// ignored, `attempts(0)` means one attempt, a scattered jitter ratio is
/// clamped (see [`Jitter::Scattered`]). The attribute checks all of these at
/// compile time instead.
///
/// # Examples
///
/// ```
/// use backoff_runtime::{Jitter, Policy};
/// use std::time::Duration;
///
/// let policy = Policy::exponential(Duration::from_millis(100))
///     .factor(2.0)
///     .max_delay(Duration::from_millis(600))
///     .jitter(Jitter::None)
///     .attempts(6);
/// let ms: Vec<u128> = policy.delays().map(|d| d.as_millis()).collect();
/// assert_eq!(ms, [100, 200, 400, 600, 600]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy<S = Builtin> {
    strategy: S,
    pub(crate) settings: Settings,
}

/// A policy's settings besides its strategy, which are generic over
/// nothing: the retry state's general path reads them through one pointer,
/// whatever the strategy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Settings {
    pub(crate) jitter: Jitter,
    /// Total calls allowed, the first included; `None` is unlimited.
    pub(crate) attempts: Option<u32>,
    pub(crate) max_elapsed: Option<Duration>,
    /// The longest `RetryAfter` wait followed; a longer one gives up.
    pub(crate) retry_after_max: Duration,
    pub(crate) seed: Option<u64>,
    /// The schedule of errors classified
    /// [`Decision::Throttled`](crate::Decision::Throttled), a kind of its
    /// own (see [`Policy::throttled`]).
    pub(crate) throttled: Option<Kind>,
    /// A schedule per kind of failure (see [`Policy::kinds`]); empty
    /// without.
    pub(crate) kinds: &'static [Kind],
    /// What a recorder calls the function this policy retries.
    pub(crate) name: Option<&'static str>,
    /// Give up instead of a sleep whose delay before jitter reaches this.
    pub(crate) stop_at: Option<Duration>,
    /// What the sleep that would cross `max_elapsed` does.
    pub(crate) on_deadline: OnDeadline,
    /// An attempt that ran this long before it failed starts the schedule
    /// over (see `Policy::reset_after`, in `state.rs`).
    pub(crate) reset_after: Option<Duration>,
}

impl Settings {
    /// A new policy's settings: no jitter (the builtin constructors set
    /// their strategy's default), the default attempt limit and
    /// `retry_after_max`, nothing else.
    const DEFAULT: Settings = Settings {
        jitter: Jitter::None,
        attempts: Some(DEFAULT_ATTEMPTS),
        max_elapsed: None,
        retry_after_max: DEFAULT_RETRY_AFTER_MAX,
        seed: None,
        throttled: None,
        kinds: &[],
        name: None,
        stop_at: None,
        on_deadline: OnDeadline::GiveUpEarly,
        reset_after: None,
    };

    /// Whether the policy's own attempt limit allows a retry after
    /// `failures` failed attempts.
    #[inline]
    pub(crate) const fn allows_retry_after(&self, failures: u32) -> bool {
        allows(self.attempts, failures)
    }
}

/// What a call does when the next sleep would end past its
/// [`max_elapsed`](Policy::max_elapsed) deadline: see
/// [`Policy::on_deadline`].
///
/// # Default
///
/// [`OnDeadline::GiveUpEarly`].
///
/// ```
/// use backoff_runtime::OnDeadline;
///
/// assert_eq!(OnDeadline::default(), OnDeadline::GiveUpEarly);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnDeadline {
    /// Give up at once, before the deadline, with the last error (reason
    /// [`Deadline`](crate::GiveUpReason::Deadline)): the attribute's
    /// `on_deadline = "give_up"`.
    #[default]
    GiveUpEarly,
    /// Cut the sleep to end at the deadline and make one last attempt
    /// there (its [`AttemptContext::last`](crate::AttemptContext::last) is
    /// true); its outcome is the call's: the attribute's
    /// `on_deadline = "last_try"`.
    LastTry,
}

impl Default for Policy {
    fn default() -> Self {
        Policy::exponential(Duration::from_millis(100))
    }
}

impl Policy<Builtin> {
    const fn builtin(strategy: Builtin) -> Self {
        Policy::from_strategy(strategy).jitter(strategy.default_jitter())
    }

    /// Exponential backoff: `base · factor^(k−1)`, factor 2 and max 10 s
    /// unless set. See [`Exponential`].
    pub const fn exponential(base: Duration) -> Self {
        Self::builtin(Builtin::Exponential(Exponential::new(base)))
    }

    /// Linear backoff: `base · k`, max 10 s unless set. See [`Linear`].
    pub const fn linear(base: Duration) -> Self {
        Self::builtin(Builtin::Linear(Linear::new(base)))
    }

    /// The same delay before every retry. See [`Constant`].
    pub const fn constant(delay: Duration) -> Self {
        Self::builtin(Builtin::Constant(Constant::new(delay)))
    }

    /// Fibonacci backoff: `base · fib(k)`, max 10 s unless set. See
    /// [`Fibonacci`].
    pub const fn fibonacci(base: Duration) -> Self {
        Self::builtin(Builtin::Fibonacci(Fibonacci::new(base)))
    }

    /// AWS decorrelated jitter, max 10 s unless set; no extra jitter by
    /// default since it is random by itself. See [`Decorrelated`].
    pub const fn decorrelated(base: Duration) -> Self {
        Self::builtin(Builtin::Decorrelated(Decorrelated::new(base)))
    }

    /// Retry at once, without sleeping. See [`Immediate`].
    pub const fn immediate() -> Self {
        Self::builtin(Builtin::Immediate(Immediate))
    }

    /// Sets the exponential growth factor.
    ///
    /// Applies to [`exponential`](Policy::exponential) only; other strategies
    /// ignore it. A factor that is not finite or not above 1 is ignored.
    pub const fn factor(mut self, factor: f64) -> Self {
        if let Builtin::Exponential(s) = self.strategy {
            self.strategy = Builtin::Exponential(s.factor(factor));
        }
        self
    }

    /// Sets the cap: no sleep, jittered or not, exceeds it (a
    /// [`Decision::RetryAfter`](crate::Decision::RetryAfter) excepted).
    ///
    /// Ignored by [`immediate`](Policy::immediate), whose delays are zero.
    pub const fn max_delay(mut self, max: Duration) -> Self {
        self.strategy = match self.strategy {
            Builtin::Exponential(s) => Builtin::Exponential(s.max_delay(max)),
            Builtin::Linear(s) => Builtin::Linear(s.max_delay(max)),
            Builtin::Constant(s) => Builtin::Constant(s.max_delay(max)),
            Builtin::Fibonacci(s) => Builtin::Fibonacci(s.max_delay(max)),
            Builtin::Decorrelated(s) => Builtin::Decorrelated(s.max_delay(max)),
            Builtin::Immediate(s) => Builtin::Immediate(s),
        };
        self
    }
}

/// `const fn` setters of a policy's [`Settings`], each with its docs:
/// `name(arg: Type) => field = value;` sets `settings.field` to `value`.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident($($a:ident: $ty:ty)?) => $field:ident = $value:expr;)*) => {$(
        $(#[$doc])*
        pub const fn $name(mut self, $($a: $ty)?) -> Self {
            self.settings.$field = $value;
            self
        }
    )*};
}

impl<S> Policy<S> {
    /// A policy over your own [`Strategy`] (or [`Sidekiq`](crate::strategy::Sidekiq),
    /// [`Buckets`](crate::strategy::Buckets), or a composed schedule:
    /// [`Chain`](crate::strategy::Chain), [`Steps`](crate::strategy::Steps),
    /// [`Shorter`](crate::strategy::Shorter), [`Longer`](crate::strategy::Longer),
    /// [`Sum`](crate::strategy::Sum)), with no extra jitter.
    ///
    /// ```
    /// use backoff_runtime::{Policy, strategy::Sidekiq};
    /// use std::time::Duration;
    ///
    /// let policy = Policy::from_strategy(Sidekiq::new().unit(Duration::from_millis(1))).attempts(4);
    /// assert_eq!(policy.delays().count(), 3);
    /// ```
    pub const fn from_strategy(strategy: S) -> Self {
        Policy {
            strategy,
            settings: Settings::DEFAULT,
        }
    }

    setters! {
        /// Names what this policy retries, for the installed recorder (see
        /// `record`, feature `record`, and `backoff-opentelemetry`'s attribute
        /// `function`): the `function` of the calls that
        /// [`retry`](Policy::retry), [`retry_async`](Policy::retry_async),
        /// [`retrying`](Policy::retrying) and the `tower` policy make with it
        /// (`"unnamed"` without a name).
        ///
        /// ```
        /// use backoff_runtime::Policy;
        ///
        /// static FETCH: Policy = Policy::immediate().attempts(3).named("app::fetch_user");
        /// assert_eq!(FETCH.retry(|| Ok::<_, ()>(1)), Ok(1));
        /// ```
        named(name: &'static str) => name = Some(name);

        /// Sets the jitter applied to each delay.
        jitter(jitter: Jitter) => jitter = jitter;

        /// Sets your own [`Jitterer`](crate::jitter::Jitterer): each sleep is
        /// what it returns for the strategy's delay, capped at the maximum
        /// (`Jitter::Custom`; see the trait for an example).
        jitter_with(jitterer: &'static dyn Jitterer) => jitter = Jitter::Custom(jitterer);

        /// Sets the total number of calls, the first included (so `attempts(1)`
        /// never retries); three unless set. Zero is taken as 1.
        attempts(attempts: u32) => attempts = Some(if attempts == 0 { 1 } else { attempts });

        /// Retries without an attempt limit (until success, a
        /// [`Decision::Stop`](crate::Decision::Stop) or the deadline).
        unlimited_attempts() => attempts = None;

        /// Sets a deadline measured from the start of the call: no retry starts a
        /// sleep that would end later than `limit` after the call began.
        max_elapsed(limit: Duration) => max_elapsed = Some(limit);

        /// Sets what the sleep that would end past
        /// [`max_elapsed`](Policy::max_elapsed) does: give up (the default), or,
        /// with [`OnDeadline::LastTry`], sleep only until the deadline and make
        /// one last attempt there, as in the Effect pattern. Without
        /// `max_elapsed` it has no effect.
        ///
        /// ```
        /// use backoff_runtime::{Jitter, OnDeadline, Policy};
        /// use std::time::Duration;
        ///
        /// let policy = Policy::constant(Duration::from_secs(4))
        ///     .jitter(Jitter::None)
        ///     .unlimited_attempts()
        ///     .max_elapsed(Duration::from_secs(10))
        ///     .on_deadline(OnDeadline::LastTry);
        /// let secs: Vec<u64> = policy.delays().map(|d| d.as_secs()).collect();
        /// assert_eq!(secs, [4, 4, 2]); // the last sleep ends at the deadline
        /// ```
        on_deadline(rule: OnDeadline) => on_deadline = rule;

        /// Starts the schedule over after an attempt that ran at least `after`
        /// before it failed, for a loop whose attempt is a session (a
        /// websocket, a stream, a database listener) that may run for hours
        /// and then drop: that failure counts as the first of a new run, so
        /// the next sleep is the schedule's first delay, the attempt limit and
        /// each kind's limit count from it, and
        /// [`max_elapsed`](Policy::max_elapsed) from that failure (a whole-call
        /// `timeout` still bounds the whole call). The attempts keep counting
        /// the call's ([`RetryEvent::run`](crate::RetryEvent::run) says which
        /// run). An attempt's time runs from the end of the sleep before it.
        /// Zero is taken as one nanosecond.
        ///
        /// ```
        /// use backoff_runtime::{Jitter, Policy};
        /// use std::time::Duration;
        ///
        /// // A listener that ran a minute before it dropped starts over at 1 s.
        /// let policy = Policy::exponential(Duration::from_secs(1))
        ///     .jitter(Jitter::None)
        ///     .attempts(5)
        ///     .reset_after(Duration::from_secs(60));
        /// # let _ = policy;
        /// ```
        reset_after(after: Duration) => reset_after =
            Some(if after.is_zero() { Duration::from_nanos(1) } else { after });

        /// Gives up instead of starting a sleep whose central delay would reach
        /// `delay`, as the Clojure retry macro's "stop once the next wait would
        /// reach 10 s". The central delay is the delay before jitter
        /// ([`Strategy::central_delay`]): for a strategy random by itself, the
        /// centre it draws around ([`Decorrelated`]'s mid-range chain,
        /// [`Sidekiq`](crate::strategy::Sidekiq)'s and
        /// [`Buckets`](crate::strategy::Buckets)' mean), so the rule stops at
        /// the same retry in every call. The call returns the last error,
        /// reason [`Attempts`](crate::GiveUpReason::Attempts). It applies to
        /// the main schedule, not to a [`throttled`](Policy::throttled) one.
        ///
        /// The attempt limit still applies: add
        /// [`unlimited_attempts`](Policy::unlimited_attempts) for this rule
        /// alone (the attribute's `stop_at_delay` does so when `attempts` is
        /// not given, and for a schedule without randomness computes the
        /// attempt count when the code compiles instead).
        ///
        /// ```
        /// use backoff_runtime::{Jitter, Policy};
        /// use std::time::Duration;
        ///
        /// let policy = Policy::exponential(Duration::from_secs(1))
        ///     .max_delay(Duration::from_secs(60))
        ///     .jitter(Jitter::None)
        ///     .unlimited_attempts()
        ///     .stop_at_delay(Duration::from_secs(10));
        /// let secs: Vec<u64> = policy.delays().map(|d| d.as_secs()).collect();
        /// assert_eq!(secs, [1, 2, 4, 8]);
        /// ```
        stop_at_delay(delay: Duration) => stop_at = Some(delay);

        /// Bounds a server's word: a
        /// [`Decision::RetryAfter`](crate::Decision::RetryAfter) asking for a
        /// wait longer than `max` gives up at once with the error (reason
        /// [`Deadline`](crate::GiveUpReason::Deadline)) instead of sleeping. The
        /// default is five minutes, so that a
        /// hostile or broken server cannot stall a caller for hours with one
        /// `Retry-After` header, even without [`max_elapsed`](Policy::max_elapsed).
        /// `Duration::MAX` follows any wait.
        ///
        /// ```
        /// use backoff_runtime::{Decision, GiveUpReason, Policy};
        /// use std::time::Duration;
        ///
        /// let policy = Policy::immediate().attempts(5).retry_after_max(Duration::from_secs(60));
        /// let mut state = policy.start();
        /// let minute = Duration::from_secs(60);
        /// assert_eq!(state.next_delay_for(Decision::RetryAfter(minute)), Some(minute));
        /// assert_eq!(state.next_delay_for(Decision::RetryAfter(minute * 60)), None);
        /// assert_eq!(state.give_up().unwrap().reason, GiveUpReason::Deadline);
        /// ```
        retry_after_max(max: Duration) => retry_after_max = max;

        /// Adds a schedule for errors classified
        /// [`Decision::Throttled`](crate::Decision::Throttled) (a 429, "queue
        /// capacity"): their retries follow `schedule`'s strategy, jitter and
        /// attempt limit, while other errors keep this policy's (the adaptive
        /// policy of the Effect pattern). Only those three settings of
        /// `schedule` are used. For any other strategy (a composed one,
        /// [`Sidekiq`](crate::strategy::Sidekiq), one of your own), see
        /// [`throttled_kind`](Policy::throttled_kind).
        ///
        /// The call then has two kinds of failure, as with
        /// [`kinds`](Policy::kinds), and each counts its own: the throttled
        /// kind, named `"throttled"` (the
        /// [`failure_kind`](crate::GiveUp::failure_kind) that reports and
        /// events give for it), and the main one, every other failure (no
        /// kind). The k-th throttled retry waits `schedule`'s delay k, whatever
        /// came between, and the throttled failure that reaches `schedule`'s
        /// attempt limit ends the call (reason
        /// [`Attempts`](crate::GiveUpReason::Attempts)). The other failures
        /// count against this policy's own attempt limit, throttled ones left
        /// out, and the main schedule's retry number skips them too. With
        /// limits `m` and `t`, a call makes at most `m + t − 1` attempts (see
        /// [`is_last_attempt`](Policy::is_last_attempt)).
        ///
        /// As for a kind, a throttled limit above 255 (a kind's most) is taken
        /// as 255. A policy with a throttled schedule has no
        /// [`kinds`](Policy::kinds): do not set both.
        ///
        /// ```
        /// use backoff_runtime::{Decision, GiveUpReason, Jitter, Policy};
        /// use std::time::Duration;
        ///
        /// let policy = Policy::exponential(Duration::from_millis(100))
        ///     .jitter(Jitter::None)
        ///     .attempts(3)
        ///     .throttled(
        ///         Policy::exponential(Duration::from_millis(500))
        ///             .max_delay(Duration::from_secs(30))
        ///             .jitter(Jitter::None)
        ///             .attempts(10),
        ///     );
        /// let mut state = policy.start();
        /// let delay = state.next_delay_for(Decision::Throttled).unwrap();
        /// assert_eq!(delay, Duration::from_millis(500));
        /// assert_eq!(state.event(delay).failure_kind, Some("throttled"));
        /// let delay = state.next_delay_for(Decision::Retry).unwrap();
        /// assert_eq!(delay, Duration::from_millis(100));
        /// assert_eq!(state.event(delay).failure_kind, None);
        /// assert_eq!(state.next_delay_for(Decision::Throttled), Some(Duration::from_millis(1000)));
        /// // The second transient failure of three allowed, the throttled ones
        /// // left out.
        /// assert_eq!(state.next_delay_for(Decision::Retry), Some(Duration::from_millis(200)));
        /// assert_eq!(state.next_delay_for(Decision::Retry), None);
        /// let report = state.give_up().unwrap();
        /// assert_eq!((report.attempts, report.reason), (5, GiveUpReason::Attempts));
        /// ```
        throttled(schedule: Policy) => throttled = Some(Kind::new("throttled", schedule));

        /// [`throttled`](Policy::throttled) on any strategy: errors classified
        /// [`Decision::Throttled`](crate::Decision::Throttled) retry on
        /// `kind`'s schedule and attempt limit, and are reported under `kind`'s
        /// name. A [`Kind::of`] a `static` policy holds a composed strategy
        /// ([`Chain`](crate::strategy::Chain), [`Sum`](crate::strategy::Sum),
        /// ..), [`Sidekiq`](crate::strategy::Sidekiq),
        /// [`Buckets`](crate::strategy::Buckets) or one of your own (what the
        /// attribute's `throttled(chain(..), attempts = n)` builds); a
        /// [`Kind::named`] without a schedule gives up at the first throttled
        /// failure (reason [`Stopped`](crate::GiveUpReason::Stopped)). The
        /// counting is [`throttled`](Policy::throttled)'s.
        ///
        /// ```
        /// use backoff_runtime::strategy::{Chain, Constant, Exponential};
        /// use backoff_runtime::{Decision, GiveUpReason, Jitter, Policy, Kind};
        /// use std::time::Duration;
        ///
        /// use Duration as D;
        /// // Twice 1 s, then exponential from 2 s: 6 throttled failures at most.
        /// static THROTTLED: Policy<Chain<Constant, Exponential>> = Policy::from_strategy(Chain::new(
        ///     Constant::new(D::from_secs(1)),
        ///     2,
        ///     Exponential::new(D::from_secs(2)).max_delay(D::from_secs(60)),
        /// ))
        /// .jitter(Jitter::None)
        /// .attempts(6);
        /// static POLICY: Policy = Policy::constant(D::from_millis(100))
        ///     .jitter(Jitter::None)
        ///     .attempts(3)
        ///     .throttled_kind(Kind::of("throttled", &THROTTLED));
        ///
        /// let mut state = POLICY.start();
        /// let waits: Vec<u64> = std::iter::from_fn(|| state.next_delay_for(Decision::Throttled))
        ///     .map(|d| d.as_secs())
        ///     .collect();
        /// assert_eq!(waits, [1, 1, 2, 4, 8]);
        /// let report = state.give_up().unwrap();
        /// assert_eq!((report.attempts, report.reason), (6, GiveUpReason::Attempts));
        /// assert_eq!(report.failure_kind, Some("throttled"));
        /// ```
        throttled_kind(kind: Kind) => throttled = Some(kind);

        /// Gives each kind of failure a schedule of its own: a
        /// [`Decision::Kind(i)`](crate::Decision::Kind) verdict retries on
        /// `kinds[i]`'s schedule and attempt limit, each kind counting its own
        /// retries (the k-th retry after a failure of kind `i` waits that
        /// schedule's delay k, whatever came between), and
        /// [`Decision::KindAfter(i, d)`](crate::Decision::KindAfter) waits `d`
        /// as [`Decision::RetryAfter`](crate::Decision::RetryAfter) does, under
        /// kind `i`'s name. This policy's own attempt limit and
        /// [`max_elapsed`](Policy::max_elapsed) still bound the whole call: set
        /// [`unlimited_attempts`](Policy::unlimited_attempts) to leave the
        /// limits to the kinds (as `#[retry(on(..))]` does unless given
        /// `attempts`). Only the first 8 entries are
        /// used; a verdict naming no entry is a plain
        /// [`Decision::Retry`](crate::Decision::Retry). A kind's limit is at
        /// most 255; a call
        /// keeps one
        /// previous delay for the schedules besides the main one: give at most
        /// one kind a `decorrelated` schedule (the one strategy that reads it;
        /// a [`throttled`](Policy::throttled) schedule, a kind of its own
        /// beside these, counted apart, shares that delay too).
        ///
        /// ```
        /// use backoff_runtime::{Decision, GiveUpReason, Jitter, Policy, Kind};
        /// use std::time::Duration;
        ///
        /// use Duration as D;
        /// static KINDS: [Kind; 2] = [
        ///     Kind::new("transient", Policy::exponential(D::from_millis(100)).jitter(Jitter::None).attempts(3)),
        ///     Kind::new("throttled", Policy::exponential(D::from_millis(500)).jitter(Jitter::None).attempts(10)),
        /// ];
        /// static POLICY: Policy = Policy::immediate().unlimited_attempts().kinds(&KINDS);
        ///
        /// let mut state = POLICY.start();
        /// assert_eq!(state.next_delay_for(Decision::Kind(0)), Some(D::from_millis(100)));
        /// assert_eq!(state.next_delay_for(Decision::Kind(1)), Some(D::from_millis(500)));
        /// assert_eq!(state.next_delay_for(Decision::Kind(1)), Some(D::from_millis(1000)));
        /// assert_eq!(state.next_delay_for(Decision::Kind(0)), Some(D::from_millis(200)));
        /// // The third transient failure reaches that kind's limit.
        /// assert_eq!(state.next_delay_for(Decision::Kind(0)), None);
        /// let report = state.give_up().unwrap();
        /// assert_eq!((report.attempts, report.reason), (5, GiveUpReason::Attempts));
        /// assert_eq!(report.failure_kind, Some("transient"));
        /// ```
        kinds(kinds: &'static [Kind]) => kinds = kinds;

        /// Makes the jitter reproducible: every call that uses this policy draws
        /// the same random sequence. For tests and simulations; in production
        /// leave it unseeded so that clients do not retry in lockstep.
        seed(seed: u64) => seed = Some(seed);
    }

    /// The name a recorder is given for the calls made with this policy:
    /// [`named`](Policy::named), or `"unnamed"`.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    ///
    /// assert_eq!(Policy::immediate().name(), "unnamed");
    /// ```
    #[doc(hidden)]
    pub const fn name(&self) -> &'static str {
        match self.settings.name {
            Some(name) => name,
            None => "unnamed",
        }
    }

    /// The settings besides the strategy, as the retry state's general
    /// path reads them.
    pub(crate) const fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The strategy.
    #[doc(hidden)]
    pub const fn strategy(&self) -> &S {
        &self.strategy
    }

    /// The jitter.
    #[doc(hidden)]
    pub const fn jitter_kind(&self) -> Jitter {
        self.settings.jitter
    }

    /// The attempt limit, `None` if unlimited.
    #[doc(hidden)]
    pub const fn attempt_limit(&self) -> Option<u32> {
        self.settings.attempts
    }

    /// The deadline set with [`max_elapsed`](Policy::max_elapsed).
    #[doc(hidden)]
    pub const fn elapsed_limit(&self) -> Option<Duration> {
        self.settings.max_elapsed
    }

    /// The bound on one `RetryAfter` wait set with
    /// [`retry_after_max`](Policy::retry_after_max).
    #[doc(hidden)]
    pub const fn retry_after_limit(&self) -> Duration {
        self.settings.retry_after_max
    }

    /// Whether attempt `attempt` (from 1) is the last the attempt limits
    /// allow: the main limit, or with a [`throttled`](Policy::throttled)
    /// schedule the last attempt the two limits allow together (each kind
    /// counts its own failures, so `main + throttled − 1`, saturating);
    /// never under unlimited attempts, main or throttled. A deadline, a
    /// budget or a breaker may still end a call earlier, and a call with
    /// two kinds may end earlier too (its failures all of one kind).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    ///
    /// let policy = Policy::immediate().attempts(3);
    /// assert!(!policy.is_last_attempt(2));
    /// assert!(policy.is_last_attempt(3));
    /// assert!(!Policy::immediate().unlimited_attempts().is_last_attempt(u32::MAX));
    ///
    /// // 2 failures of the main kind and 4 throttled ones at most, then the
    /// // 7th attempt's failure, of either kind, is the last.
    /// let two = policy.throttled(Policy::immediate().attempts(5));
    /// assert!(!two.is_last_attempt(6));
    /// assert!(two.is_last_attempt(7));
    /// let unlimited = policy.throttled(Policy::immediate().unlimited_attempts());
    /// assert!(!unlimited.is_last_attempt(u32::MAX));
    /// ```
    #[doc(hidden)]
    #[inline]
    pub const fn is_last_attempt(&self, attempt: u32) -> bool {
        let limit = match (self.settings.attempts, &self.settings.throttled) {
            (None, _) => return false,
            (Some(main), None) => main,
            (Some(main), Some(t)) => match t.limit() {
                None => return false,
                // (Each limit is at least 1.)
                Some(t) => main.saturating_add(t.saturating_sub(1)),
            },
        };
        attempt >= limit
    }

    /// A fresh random source for one call: seeded if [`seed`](Policy::seed)
    /// was set. Nothing is drawn until the first jittered delay.
    pub(crate) const fn rng(&self) -> JitterRng {
        match self.settings.seed {
            Some(seed) => JitterRng::from_seed(seed),
            None => JitterRng::from_entropy(),
        }
    }
}

/// Whether `limit` (total calls; `None` unlimited) allows another call after
/// `failures` failed ones.
#[inline]
pub(crate) const fn allows(limit: Option<u32>, failures: u32) -> bool {
    match limit {
        Some(limit) => failures < limit,
        None => true,
    }
}

impl<S: Strategy> Policy<S> {
    /// The jittered delay before retry `retry` of the main schedule.
    #[inline]
    pub(crate) fn backoff(
        &self,
        retry: u32,
        previous: &mut Option<Duration>,
        rng: &mut JitterRng,
    ) -> Duration {
        crate::strategy::backoff(&self.strategy, self.settings.jitter, retry, previous, rng)
    }

    /// [`backoff`](Policy::backoff), or `None` when the central delay of
    /// `retry` (the delay before jitter, a random strategy's
    /// [`Strategy::central_delay`]) reaches the
    /// [`stop_at_delay`](Policy::stop_at_delay).
    #[inline]
    pub(crate) fn backoff_within(
        &self,
        retry: u32,
        previous: &mut Option<Duration>,
        rng: &mut JitterRng,
    ) -> Option<Duration> {
        if let Some(stop) = self.settings.stop_at
            && self.strategy.central_delay(retry) >= stop
        {
            return None;
        }
        Some(self.backoff(retry, previous, rng))
    }

    /// The schedule: the sleeps a call would make if every attempt failed at
    /// once, jitter included: `attempts − 1` delays (endless with
    /// [`unlimited_attempts`](Policy::unlimited_attempts)). With
    /// [`max_elapsed`](Policy::max_elapsed), it ends before the delay that
    /// would take the running total past the deadline.
    ///
    /// ```
    /// use backoff_runtime::{Jitter, Policy};
    /// use std::time::Duration;
    ///
    /// let policy = Policy::linear(Duration::from_secs(1))
    ///     .jitter(Jitter::None)
    ///     .unlimited_attempts()
    ///     .max_elapsed(Duration::from_secs(10));
    /// let secs: Vec<u64> = policy.delays().map(|d| d.as_secs()).collect();
    /// assert_eq!(secs, [1, 2, 3, 4]); // a fifth, 5 s, would end at 15 s
    /// ```
    pub fn delays(&self) -> impl core::iter::FusedIterator<Item = Duration> {
        Delays {
            policy: self,
            retry: 0,
            previous: None,
            rng: self.rng(),
            total: Duration::ZERO,
            done: false,
            marks: Default::default(),
        }
    }
}

/// The iterator returned by [`Policy::delays`].
#[derive(Debug, Clone)]
struct Delays<'p, S = Builtin> {
    policy: &'p Policy<S>,
    retry: u32,
    previous: Option<Duration>,
    rng: JitterRng,
    total: Duration,
    done: bool,
    /// A staged schedule's marks (its time: `total`, failures taking none).
    marks: [crate::strategy::Mark; crate::strategy::MAX_MARKS],
}

impl<S: Strategy> Iterator for Delays<'_, S> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let (policy, total) = (self.policy, self.total);
        self.retry = self.retry.saturating_add(1);
        let stages: (&dyn Fn() -> Duration, _) = (&move || total, &mut self.marks[..]);
        let delay = (!self.done && policy.settings.allows_retry_after(self.retry))
            .then(|| policy.backoff_at(self.retry, &mut self.previous, &mut self.rng, stages));
        let Some(delay) = delay.flatten() else {
            self.done = true;
            return None;
        };
        if let Some(limit) = policy.settings.max_elapsed
            && total.saturating_add(delay) > limit
        {
            self.done = true;
            // The last try: a sleep cut to end at the deadline.
            let last = matches!(policy.settings.on_deadline, OnDeadline::LastTry) && total < limit;
            return last.then(|| limit - total);
        }
        self.total = total.saturating_add(delay);
        Some(delay)
    }
}

impl<S: Strategy> core::iter::FusedIterator for Delays<'_, S> {}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn ms<S: Strategy>(p: &Policy<S>) -> Vec<u128> {
        p.delays().map(|d| d.as_millis()).collect()
    }

    #[test]
    fn default_matches_the_attribute_default() {
        let p = Policy::default();
        assert_eq!(p.attempt_limit(), Some(3));
        assert_eq!(p.jitter_kind(), Jitter::Full);
        assert_eq!(p.strategy().max_delay(), Duration::from_secs(10));
        assert_eq!(ms(&p.jitter(Jitter::None)), [100, 200]);
    }

    #[test]
    fn reference_vectors() {
        let none = |p: Policy| p.jitter(Jitter::None);
        let exp = none(Policy::exponential(MS(100)).max_delay(MS(600)).attempts(8));
        assert_eq!(ms(&exp), [100, 200, 400, 600, 600, 600, 600]);
        let exp15 = none(Policy::exponential(MS(100)).factor(1.5).attempts(4));
        assert_eq!(ms(&exp15), [100, 150, 225]);
        let lin = none(Policy::linear(MS(100)).attempts(8));
        assert_eq!(ms(&lin), [100, 200, 300, 400, 500, 600, 700]);
        let lin_capped = none(Policy::linear(MS(100)).max_delay(MS(350)).attempts(6));
        assert_eq!(ms(&lin_capped), [100, 200, 300, 350, 350]);
        let fib = none(Policy::fibonacci(MS(100)).attempts(8));
        assert_eq!(ms(&fib), [100, 100, 200, 300, 500, 800, 1300]);
        let constant = none(Policy::constant(Duration::from_secs(1)));
        assert_eq!(ms(&constant), [1000, 1000]);
        assert_eq!(ms(&Policy::immediate().attempts(4)), [0, 0, 0]);
    }

    #[test]
    fn factor_applies_to_exponential_only() {
        let lin = Policy::linear(MS(100)).factor(3.0).jitter(Jitter::None);
        assert_eq!(ms(&lin), [100, 200]);
    }

    #[test]
    fn attempts_count_calls() {
        assert_eq!(Policy::immediate().attempts(1).delays().count(), 0);
        assert_eq!(Policy::immediate().attempts(0).delays().count(), 0);
        assert_eq!(Policy::immediate().attempts(5).delays().count(), 4);
        assert_eq!(
            Policy::immediate()
                .unlimited_attempts()
                .delays()
                .take(1000)
                .count(),
            1000
        );
    }

    #[test]
    fn seeded_schedules_repeat_and_unseeded_ones_differ() {
        let p = Policy::exponential(MS(100)).attempts(20);
        assert_eq!(ms(&p.seed(5)), ms(&p.seed(5)));
        assert_ne!(ms(&p.seed(5)), ms(&p.seed(6)));
        assert_ne!(ms(&p), ms(&p));
    }

    #[test]
    fn max_elapsed_ends_the_schedule() {
        let p = Policy::constant(Duration::from_secs(3))
            .jitter(Jitter::None)
            .unlimited_attempts()
            .max_elapsed(Duration::from_secs(10));
        assert_eq!(p.delays().count(), 3);
    }

    #[test]
    fn decorrelated_defaults_to_no_extra_jitter() {
        assert_eq!(Policy::decorrelated(MS(5)).jitter_kind(), Jitter::None);
    }

    #[test]
    fn stop_at_delay_gives_up_before_a_delay_that_reaches_it() {
        // Decorrelated's central delays from 100 ms: 200, 350, 575, 912.5,
        // 1418.75, then 2178.125 ms, which reaches 2 s: five retries in
        // every call, whatever it draws.
        let stop = Duration::from_secs(2);
        for seed in 0..20 {
            let policy = Policy::decorrelated(MS(100))
                .max_delay(Duration::from_secs(60))
                .unlimited_attempts()
                .stop_at_delay(stop)
                .seed(seed);
            let mut state = policy.start();
            let mut retries = 0;
            while state.next_delay().is_some() {
                retries += 1;
                assert!(retries < 100, "never stopped");
            }
            assert_eq!(retries, 5);
            assert_eq!(state.give_up_reason(), Some(crate::GiveUpReason::Attempts));
        }
        // Before jitter: a full jitter below the stop does not hide a delay
        // that reaches it.
        let full = Policy::exponential(Duration::from_secs(1))
            .jitter(Jitter::Full)
            .unlimited_attempts()
            .stop_at_delay(Duration::from_secs(4));
        assert_eq!(full.delays().count(), 2);
        // Spread reads the central delay.
        let spread = Policy::linear(Duration::from_secs(1))
            .jitter(Jitter::Spread)
            .unlimited_attempts()
            .stop_at_delay(Duration::from_secs(3));
        assert_eq!(spread.delays().count(), 2);
        assert_eq!(spread.delay_for(3, 1), None);
        assert!(spread.delay_for(2, 1).is_some());
        // The attempt limit still applies.
        assert_eq!(full.attempts(2).delays().count(), 1);
    }

    #[test]
    fn policies_are_const() {
        const P: Policy = Policy::exponential(Duration::from_millis(100))
            .factor(3.0)
            .max_delay(Duration::from_secs(5))
            .jitter(Jitter::Equal)
            .attempts(5)
            .max_elapsed(Duration::from_secs(30))
            .seed(1);
        assert_eq!(P.attempt_limit(), Some(5));
    }
}
