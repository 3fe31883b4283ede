//! OpenTelemetry metrics (feature `opentelemetry`): every retried call
//! records its attempts, their durations, the call's duration and outcome,
//! and the delays slept, through the global meter provider
//! ([`opentelemetry::global`]), meter `backoff`; named breakers and budgets
//! record their state.
//!
//! | instrument | kind, unit | attributes |
//! |---|---|---|
//! | `backoff.attempts` | counter | `function`, `attempt.type` (`original` · `retry` · `hedge`), `outcome` (`ok` · `error` · `rejected_ok`) |
//! | `backoff.attempt.duration` | histogram, s | `function`, `outcome` |
//! | `backoff.call.duration` | histogram, s | `function`, `outcome` (`ok` · `gave_up`), `give_up.reason` (only when given up), `attempts` |
//! | `backoff.retry.delay` | histogram, s | `function` |
//! | `backoff.breaker.state` | gauge (0 closed, 1 half-open, 2 open) | `breaker` |
//! | `backoff.budget.tokens` | gauge | `budget` |
//!
//! # Turning recording on: [`install`]
//!
//! OpenTelemetry's API cannot tell whether the global provider is a real
//! one or its no-op default, so recording starts when you say so: call
//! [`install`] after [`opentelemetry::global::set_meter_provider`]. It
//! builds the instruments from the global provider and turns recording on
//! for the whole process. Until then (and after [`uninstall`]) a call
//! records nothing, builds nothing and reads no clock: its cost is one
//! relaxed atomic load and a branch when it begins, and a branch when it
//! ends. Installing again rebuilds the instruments from the provider
//! installed at that time.
//!
//! ```
//! use opentelemetry::global;
//! # let provider = opentelemetry::metrics::NoopMeterProvider::new();
//! global::set_meter_provider(provider); // your SDK's provider
//! backoff_runtime::metrics::install();
//! assert!(backoff_runtime::metrics::is_installed());
//! # backoff_runtime::metrics::uninstall();
//! ```
//!
//! # Spans
//!
//! [`install`] also takes a tracer (scope [`METER`]) from the global tracer
//! provider ([`opentelemetry::global::set_tracer_provider`]; set it before
//! calling [`install`]). Each attempt that ends is then one span of kind
//! `Internal`, named by the call's `function`, a child of the context
//! current where the attempt ended (the caller's span), spanning the
//! attempt's own time on the call's clock (so on tokio's paused clock
//! too), with status `Error` unless the attempt was accepted:
//!
//! | span attribute | value |
//! |---|---|
//! | `code.function.name` | the call's `function` |
//! | `attempt.type` | `original` · `retry` · `hedge` |
//! | `backoff.attempt` | the attempt's number, from 1 |
//! | `outcome` | `ok` · `error` · `rejected_ok` |
//! | `http.request.resend_count` | the number − 1, on the attempts after the first, with the feature `http` (OpenTelemetry's HTTP conventions set it only on resends) |
//!
//! The span is built when the attempt ends, with the time it started: the
//! provider's sampler decides then whether it is recorded (a
//! `Sampler::TraceIdRatioBased` keeps that share of them), and an attempt
//! costs nothing more while it runs, nor adds a byte to an `async fn`'s
//! future. Because it is built afterwards, it is not the parent of spans
//! the attempt's body makes (an HTTP client's own span is its sibling).
//! An attempt cancelled by a `timeout` has no span, as it has no count in
//! `backoff.attempts`. With the default no-op tracer provider the spans
//! are no-ops.
//!
//! # Names
//!
//! `function` is what the call is known by: for `#[retry]`,
//! `module_path!()::name`, fixed at compile time; for
//! [`Policy::retry`](crate::Policy::retry), `retry_async`, `retrying` and the
//! `tower` policy, the policy's [`named`](crate::Policy::named) (or
//! [`UNNAMED`]). Breakers and budgets record their gauges only when
//! [`named`](crate::CircuitBreaker::named): unnamed ones would share one
//! series.

use core::time::Duration;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::global::BoxedTracer;
use opentelemetry::metrics::{Counter, Gauge, Histogram, Meter};
use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer as _};

use crate::clock::Clock;
#[cfg(feature = "tokio")]
use crate::event::AttemptKind;
use crate::report::GiveUpReason;

/// The meter's name: the instrumentation scope of every instrument.
///
/// ```
/// assert_eq!(backoff_runtime::metrics::METER, "backoff");
/// ```
pub const METER: &str = "backoff";

/// The `function` of a call whose policy has no
/// [`name`](crate::Policy::named).
///
/// ```
/// use backoff_runtime::{metrics::UNNAMED, Policy};
///
/// assert_eq!(Policy::immediate().name(), UNNAMED);
/// ```
pub const UNNAMED: &str = "unnamed";

/// Whether recording is on (see [`install`]).
static ON: AtomicBool = AtomicBool::new(false);

/// The instruments, once installed.
static INSTRUMENTS: RwLock<Option<Instruments>> = RwLock::new(None);

/// Histogram buckets in seconds (OpenTelemetry's advice for request
/// durations, extended to a minute for backoff delays).
const SECONDS: [f64; 15] = [
    0.0, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0, 60.0,
];

struct Instruments {
    attempts: Counter<u64>,
    attempt_duration: Histogram<f64>,
    call_duration: Histogram<f64>,
    retry_delay: Histogram<f64>,
    breaker_state: Gauge<u64>,
    budget_tokens: Gauge<f64>,
    /// The attempts' spans' tracer.
    tracer: BoxedTracer,
}

impl Instruments {
    fn new(meter: &Meter, tracer: BoxedTracer) -> Self {
        let seconds = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(SECONDS.to_vec())
                .build()
        };
        Instruments {
            attempts: meter
                .u64_counter("backoff.attempts")
                .with_description("Attempts made, by type and outcome")
                .build(),
            attempt_duration: seconds("backoff.attempt.duration", "Duration of each attempt"),
            call_duration: seconds(
                "backoff.call.duration",
                "Duration of each retried call, its attempts and sleeps included",
            ),
            retry_delay: seconds("backoff.retry.delay", "Delay slept before each retry"),
            breaker_state: meter
                .u64_gauge("backoff.breaker.state")
                .with_description("Circuit breaker state: 0 closed, 1 half-open, 2 open")
                .build(),
            budget_tokens: meter
                .f64_gauge("backoff.budget.tokens")
                .with_description("Tokens left in a retry budget")
                .build(),
            tracer,
        }
    }
}

/// Builds the instruments from the global meter provider (meter
/// [`METER`]) and turns recording on for the process. Call it after
/// installing your provider; calling it again rebuilds the instruments
/// from the provider installed then.
///
/// ```
/// backoff_runtime::metrics::install();
/// assert!(backoff_runtime::metrics::is_installed());
/// backoff_runtime::metrics::uninstall();
/// assert!(!backoff_runtime::metrics::is_installed());
/// ```
pub fn install() {
    let instruments = Instruments::new(
        &opentelemetry::global::meter(METER),
        opentelemetry::global::tracer(METER),
    );
    let mut slot = INSTRUMENTS.write().unwrap_or_else(|e| e.into_inner());
    *slot = Some(instruments);
    ON.store(true, Ordering::Release);
}

/// Turns recording off and drops the instruments: calls then cost what
/// they cost before [`install`].
///
/// ```
/// backoff_runtime::metrics::uninstall();
/// assert!(!backoff_runtime::metrics::is_installed());
/// ```
pub fn uninstall() {
    ON.store(false, Ordering::Release);
    let mut slot = INSTRUMENTS.write().unwrap_or_else(|e| e.into_inner());
    *slot = None;
}

/// Whether [`install`] turned recording on (and no [`uninstall`] turned it
/// off since).
///
/// ```
/// if !backoff_runtime::metrics::is_installed() {
///     // Calls record nothing and read no clock.
/// }
/// ```
#[inline]
pub fn is_installed() -> bool {
    on()
}

/// Whether recording is on: one relaxed load.
#[inline(always)]
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Runs `f` with the instruments, if installed.
#[inline]
fn with(f: impl FnOnce(&Instruments)) {
    let slot = INSTRUMENTS.read().unwrap_or_else(|e| e.into_inner());
    if let Some(instruments) = slot.as_ref() {
        f(instruments);
    }
}

/// What an attempt's outcome was, as `backoff.attempts` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// An `Ok` (accepted).
    Ok,
    /// An error.
    Error,
    /// An `Ok` that `when_ok` rejected.
    RejectedOk,
}

impl Outcome {
    const fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::RejectedOk => "rejected_ok",
        }
    }
}

/// `attempt.type` of attempt `number` (from 1). (`hedge` is for hedged
/// calls.)
const fn attempt_type(number: u32) -> &'static str {
    if number <= 1 { "original" } else { "retry" }
}

/// Records one attempt: `backoff.attempts`, `backoff.attempt.duration`
/// and its span.
pub(crate) fn attempt(function: &'static str, number: u32, outcome: Outcome, took: Duration) {
    attempt_of(function, attempt_type(number), number, outcome, took);
}

/// Records attempt `number` (from 1), of type `kind` (`original`, `retry`,
/// `hedge`), which took `took` and just ended.
#[inline]
fn attempt_of(
    function: &'static str,
    kind: &'static str,
    number: u32,
    outcome: Outcome,
    took: Duration,
) {
    with(|i| {
        span(&i.tracer, function, kind, number, outcome, took);
        let outcome = KeyValue::new("outcome", outcome.as_str());
        let function = KeyValue::new("function", function);
        i.attempts.add(
            1,
            &[
                function.clone(),
                KeyValue::new("attempt.type", kind),
                outcome.clone(),
            ],
        );
        i.attempt_duration
            .record(took.as_secs_f64(), &[function, outcome]);
    });
}

/// The span of an attempt that ended now, after `took` (see the module's
/// "Spans"): built now with its start, so the sampler decides now.
fn span(
    tracer: &BoxedTracer,
    function: &'static str,
    kind: &'static str,
    number: u32,
    outcome: Outcome,
    took: Duration,
) {
    let end = std::time::SystemTime::now();
    let start = end.checked_sub(took).unwrap_or(end);
    let mut attributes = Vec::with_capacity(5);
    attributes.extend([
        KeyValue::new("code.function.name", function),
        KeyValue::new("attempt.type", kind),
        KeyValue::new("backoff.attempt", i64::from(number)),
        KeyValue::new("outcome", outcome.as_str()),
    ]);
    #[cfg(feature = "http")]
    if number > 1 {
        attributes.push(KeyValue::new(
            "http.request.resend_count",
            i64::from(number - 1),
        ));
    }
    let mut span = tracer
        .span_builder(function)
        .with_kind(SpanKind::Internal)
        .with_start_time(start)
        .with_attributes(attributes)
        .start(tracer);
    if outcome != Outcome::Ok {
        span.set_status(Status::error(outcome.as_str()));
    }
    span.end_with_timestamp(end);
}

/// Records a granted retry's delay: `backoff.retry.delay`.
pub(crate) fn delay(function: &'static str, delay: Duration) {
    with(|i| {
        i.retry_delay
            .record(delay.as_secs_f64(), &[KeyValue::new("function", function)]);
    });
}

/// Records a call's end: `backoff.call.duration`, `gave_up` with the
/// reason if `reason` is given, else `ok`.
pub(crate) fn call(
    function: &'static str,
    reason: Option<GiveUpReason>,
    attempts: u32,
    took: Duration,
) {
    with(|i| {
        let function = KeyValue::new("function", function);
        let attempts = KeyValue::new("attempts", i64::from(attempts));
        let seconds = took.as_secs_f64();
        match reason {
            None => i.call_duration.record(
                seconds,
                &[function, KeyValue::new("outcome", "ok"), attempts],
            ),
            Some(reason) => i.call_duration.record(
                seconds,
                &[
                    function,
                    KeyValue::new("outcome", "gave_up"),
                    KeyValue::new("give_up.reason", reason.as_str()),
                    attempts,
                ],
            ),
        }
    });
}

/// Records a named breaker's state: 0 closed, 1 half-open, 2 open.
#[cold]
#[inline(never)]
pub(crate) fn breaker_state(name: &'static str, state: u64) {
    if on() {
        with(|i| {
            i.breaker_state
                .record(state, &[KeyValue::new("breaker", name)]);
        });
    }
}

/// Records a named budget's tokens.
#[cold]
#[inline(never)]
pub(crate) fn budget_tokens(name: &'static str, tokens: f64) {
    if on() {
        with(|i| {
            i.budget_tokens
                .record(tokens, &[KeyValue::new("budget", name)]);
        });
    }
}

/// One call's recording, started when recording was on as the call began:
/// the function, the times, the attempts counted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Live {
    function: &'static str,
    clock: Clock,
    began: Instant,
    attempt_began: Instant,
    attempts: u32,
}

/// The process-wide anchor of [`ticks`].
static ANCHOR: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// `now` as 55 bits of nanoseconds from a process-wide anchor, wrapping
/// (before the anchor, as it wraps: tokio's paused clock can read earlier
/// than an anchor another runtime set), with the top bit of the 56 set
/// (the flag of a call that records).
pub(crate) fn ticks(now: Instant) -> [u8; 7] {
    let t = (nanos(now) & TICKS | 1 << 55).to_le_bytes();
    [t[0], t[1], t[2], t[3], t[4], t[5], t[6]]
}

/// `now` in nanoseconds from a process-wide anchor, wrapping (before the
/// anchor, as it wraps: tokio's paused clock can read earlier than an
/// anchor another runtime set).
pub(crate) fn nanos(now: Instant) -> u64 {
    // (A second before the first reading: a reading near it counts up.)
    let anchor = *ANCHOR.get_or_init(|| now.checked_sub(Duration::from_secs(1)).unwrap_or(now));
    match now.checked_duration_since(anchor) {
        Some(after) => after.as_nanos() as u64,
        None => 0u64.wrapping_sub(anchor.duration_since(now).as_nanos() as u64),
    }
}

/// The 55 bits of [`ticks`] that count.
const TICKS: u64 = (1 << 55) - 1;

/// The time from `then` to `now` (both from [`ticks`]): right for spans
/// under 2⁵⁵ ns (417 days).
fn since(then: [u8; 7], now: [u8; 7]) -> Duration {
    let value = |t: [u8; 7]| u64::from_le_bytes([t[0], t[1], t[2], t[3], t[4], t[5], t[6], 0]);
    Duration::from_nanos(value(now).wrapping_sub(value(then)) & TICKS)
}

impl Live {
    /// A call that began at `began` (from [`ticks`]) and whose attempt
    /// began at `attempt` (else the call's), after `attempts` attempts
    /// ended: a compact loop's recording, resumed for one step.
    pub(crate) fn resume(
        function: &'static str,
        clock: Clock,
        began: [u8; 7],
        attempt: Option<u64>,
        attempts: u32,
    ) -> Self {
        let now = clock();
        let ago = |elapsed: Duration| now.checked_sub(elapsed).unwrap_or(now);
        let began = ago(since(began, ticks(now)));
        let attempt_began = match attempt {
            Some(at) => ago(Duration::from_nanos(nanos(now).wrapping_sub(at))),
            None => began,
        };
        Live {
            function,
            clock,
            began,
            attempt_began,
            attempts,
        }
    }

    /// A call beginning now.
    #[cold]
    #[inline(never)]
    pub(crate) fn begin(function: &'static str, clock: Clock) -> Option<Self> {
        let now = clock();
        Some(Live {
            function,
            clock,
            began: now,
            attempt_began: now,
            attempts: 0,
        })
    }

    /// Another attempt begins now (the first began with the call).
    #[cold]
    #[inline(never)]
    pub(crate) fn attempt_starts(&mut self) {
        if self.attempts > 0 {
            self.attempt_began = (self.clock)();
        }
    }

    /// The attempt in flight ended with `outcome`, at `now`.
    fn attempt_ended(&mut self, outcome: Outcome, now: Instant) {
        self.attempts = self.attempts.saturating_add(1);
        let took = now.saturating_duration_since(self.attempt_began);
        attempt(self.function, self.attempts, outcome, took);
    }

    /// The attempt ended with `outcome` and the call goes on, after
    /// `delay`.
    #[cold]
    #[inline(never)]
    pub(crate) fn retrying(&mut self, outcome: Outcome, delay: Duration) {
        self.attempt_ended(outcome, (self.clock)());
        self::delay(self.function, delay);
    }

    /// The attempt ended with an accepted `Ok`: the call succeeded.
    #[cold]
    #[inline(never)]
    pub(crate) fn succeeded(&mut self) {
        let now = (self.clock)();
        self.attempt_ended(Outcome::Ok, now);
        call(
            self.function,
            None,
            self.attempts,
            now.saturating_duration_since(self.began),
        );
    }

    /// The call gave up for `reason` after `attempts` attempts that this
    /// recording did not see end (a hedged call past its `timeout`).
    #[cold]
    #[inline(never)]
    pub(crate) fn gave_up_after(&mut self, attempts: u32, reason: GiveUpReason) {
        self.attempts = attempts;
        self.gave_up(None, reason);
    }

    /// The call gave up for `reason`; `outcome` is its last attempt's, or
    /// `None` if no attempt ended (a breaker refused it, or a timeout
    /// cancelled the attempt in flight).
    #[cold]
    #[inline(never)]
    pub(crate) fn gave_up(&mut self, outcome: Option<Outcome>, reason: GiveUpReason) {
        let now = (self.clock)();
        if let Some(outcome) = outcome {
            self.attempt_ended(outcome, now);
        }
        call(
            self.function,
            Some(reason),
            self.attempts,
            now.saturating_duration_since(self.began),
        );
    }

    /// A hedged call's attempt of kind `kind`, begun at `began`, ended now
    /// with `outcome` (the attempts of a hedged call overlap, so each keeps
    /// its own start).
    #[cfg(feature = "tokio")]
    #[cold]
    #[inline(never)]
    pub(crate) fn hedged_attempt(&mut self, kind: AttemptKind, began: Instant, outcome: Outcome) {
        self.attempts = self.attempts.saturating_add(1);
        let took = (self.clock)().saturating_duration_since(began);
        attempt_of(self.function, kind.as_str(), self.attempts, outcome, took);
    }

    /// A hedged call ends, after `started` attempts (the cancelled ones
    /// included): accepted (`None`) or given up for `reason`.
    #[cfg(feature = "tokio")]
    #[cold]
    #[inline(never)]
    pub(crate) fn finished(&mut self, reason: Option<GiveUpReason>, started: u32) {
        let took = (self.clock)().saturating_duration_since(self.began);
        call(self.function, reason, started, took);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Recording;
    use core::sync::atomic::AtomicU32;

    static READS: AtomicU32 = AtomicU32::new(0);

    fn counting() -> Instant {
        READS.fetch_add(1, Ordering::Relaxed);
        Instant::now()
    }

    /// Nothing in this crate's unit tests installs the metrics: a call
    /// that records nothing reads no clock, whatever it is told.
    #[test]
    fn a_call_not_recorded_reads_no_clock() {
        assert!(!is_installed());
        let mut recording = Recording::begin("tests::off", counting);
        assert!(!recording.is_live());
        recording.attempt_starts();
        recording.retried(false, Duration::ZERO);
        recording.succeeded();
        recording.gave_up(Some(true), GiveUpReason::Attempts);
        recording.gave_up(None, GiveUpReason::CircuitOpen);
        let mut began = crate::driver::CallBegan::begin();
        let _attempt = began.attempt(counting);
        began.gave_up("tests::off", counting, 1, GiveUpReason::Timeout);
        assert_eq!(READS.load(Ordering::Relaxed), 0);
    }

    /// A compact loop's 7-byte start measures a call to the nanosecond,
    /// whether the reading is after the process's anchor or (tokio's paused
    /// clock of another runtime) before it, and across the 56-bit wrap.
    #[test]
    fn call_began_ticks_measure_exactly_around_the_anchor() {
        let anchor = Instant::now();
        assert_ne!(
            ticks(anchor)[6] & 0x80,
            0,
            "the flag of a call that records"
        );
        let ns = Duration::from_nanos;
        for (from, took) in [
            (anchor, ns(1_234_567_891)),
            (anchor - Duration::from_secs(3_600), ns(7)),
            (anchor - ns(10), ns(20)),
            (
                anchor + Duration::from_secs(86_400 * 400),
                Duration::from_secs(5),
            ),
        ] {
            assert_eq!(since(ticks(from), ticks(from + took)), took);
        }
        let (max, wrap) = ([0xff; 7], [0, 0, 0, 0, 0, 0, 0x80]);
        assert_eq!(since(max, wrap), ns(1));
    }

    #[test]
    fn attribute_values() {
        assert_eq!(
            [attempt_type(1), attempt_type(2), attempt_type(u32::MAX)],
            ["original", "retry", "retry"]
        );
        assert_eq!(
            [Outcome::Ok, Outcome::Error, Outcome::RejectedOk].map(Outcome::as_str),
            ["ok", "error", "rejected_ok"]
        );
    }
}
