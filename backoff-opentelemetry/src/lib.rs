//! OpenTelemetry metrics and spans for `backoff-runtime`: every retried call
//! records its attempts, their durations, the call's duration and outcome,
//! and the delays slept, through the global meter provider
//! ([`opentelemetry::global`], `opentelemetry` 0.33), meter [`METER`];
//! named breakers and budgets record their state, and a fleet's store
//! (`backoff_redis::RedisStore`, with its feature `record`) whether its
//! remote answers; each attempt is a span of the global tracer provider.
//!
//! | instrument | kind, unit | attributes |
//! |---|---|---|
//! | `backoff.attempts` | counter | `function`, `attempt.type` (`original` · `retry` · `hedge`), `outcome` (`ok` · `error` · `rejected_ok` · `cancelled`: a hedged call's attempt dropped because another won) |
//! | `backoff.attempt.duration` | histogram, s | `function`, `outcome` |
//! | `backoff.call.duration` | histogram, s | `function`, `outcome` (`ok` · `gave_up`), `give_up.reason` (only when given up), `failure.kind` (only when given up under `on(..)` kinds: the arm's pattern text), `attempts` (a bucket: `0` · `1` · `2` · `3` · `4-5` · `6-10` · `>10`) |
//! | `backoff.retry.delay` | histogram, s | `function` |
//! | `backoff.breaker.state` | gauge (0 closed, 1 half-open, 2 open) | `breaker` |
//! | `backoff.budget.tokens` | gauge | `budget` |
//! | `backoff.remote.reachable` | gauge (1 answers, 0 its syncs keep failing) | `remote` |
//!
//! This crate implements `backoff-runtime`'s recording facade
//! ([`backoff_runtime::record::Recorder`]); see that module for the events
//! and what `function` names. The facade is the runtime's feature `record`,
//! off by default, and this crate turns it on: a program that depends on
//! `backoff-opentelemetry` adds nothing to its own `backoff-runtime`
//! dependency (cargo unifies a crate's features across the dependency
//! graph, so every `#[retry]` of the program is built to record). A
//! program that does not depend on it, nor turns `record` on, pays nothing
//! for recording: not even the one atomic load below.
//!
//! # Turning recording on: [`install`]
//!
//! OpenTelemetry's API cannot tell whether the global provider is a real
//! one or its no-op default, and instruments built from the no-op provider
//! stay no-ops, so recording starts when you say so: call [`install`] after
//! [`opentelemetry::global::set_meter_provider`] (and
//! [`set_tracer_provider`](opentelemetry::global::set_tracer_provider)).
//! It builds the instruments and the tracer from the global providers and
//! installs this crate's recorder with
//! [`backoff_runtime::record::set_recorder`]. Until then a call records
//! nothing, builds nothing and reads no clock: its cost is one atomic load
//! when it begins. Installing again rebuilds the instruments from the
//! providers installed at that time.
//!
//! ```
//! use opentelemetry::global;
//! # let provider = opentelemetry::metrics::NoopMeterProvider::new();
//! global::set_meter_provider(provider); // your SDK's provider
//! backoff_opentelemetry::install();
//! assert!(backoff_opentelemetry::is_installed());
//! ```
//!
//! # Spans
//!
//! [`install`] also takes a tracer (scope [`METER`]) from the global tracer
//! provider. Each attempt that ends is then one span of kind `Internal`,
//! named by the call's `function`, spanning the attempt's own time on the
//! call's clock (so on tokio's paused clock too), with status `Error` for
//! an `error` or a `rejected_ok`:
//!
//! | span attribute | value |
//! |---|---|
//! | `code.function.name` | the call's `function` |
//! | `attempt.type` | `original` · `retry` · `hedge` |
//! | `backoff.attempt` | the attempt's number, from 1 |
//! | `outcome` | `ok` · `error` · `rejected_ok` · `cancelled` |
//! | `http.request.resend_count` | the number − 1, on the attempts after the first, with this crate's feature `http` (OpenTelemetry's HTTP conventions set it only on resends) |
//!
//! A call is one trace. Its attempts are children of the caller's span
//! (the context current where they end), if there is one; otherwise of a
//! span `backoff.call` (a root, attribute `code.function.name`) that lasts
//! the call's whole time and ends with its `outcome`, `backoff.attempts`
//! and, when given up, `give_up.reason` and status `Error`.
//!
//! A span is built when its attempt ends, with the time it started: the
//! provider's sampler decides then whether it is recorded (a
//! `Sampler::TraceIdRatioBased` keeps that share of them), and an attempt
//! costs nothing more while it runs, nor adds a byte to an `async fn`'s
//! future. Because it is built afterwards, it is not the parent of spans
//! the attempt's body makes (an HTTP client's own span is its sibling).
//! The call's span is begun when its first attempt ends and kept, by the
//! call's [`CallId`], until the call ends; a call dropped unfinished (its
//! caller's own timeout) is never told ended, so its span is kept until
//! 4,096 calls fill its shard of the table (one of 16), when the shard's
//! spans are ended and forgotten. An attempt cancelled by a `timeout` has
//! no span, as it has no count in `backoff.attempts`. With the default
//! no-op tracer provider no span is built after the first (which has no
//! trace), and no call span is kept.
//!
//! # Features
//!
//! - `http` (off): `http.request.resend_count` on each attempt's span after
//!   the first. OpenTelemetry defines it for HTTP requests only: turn it on
//!   when the retried calls are HTTP requests (the core's `http` feature
//!   no longer decides it: the core does not know this crate).
#![forbid(unsafe_code)]
// docs.rs (nightly, `--cfg docsrs`): each item gated by a feature says so.
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use backoff_runtime::CircuitState;
use backoff_runtime::record::{
    self, AttemptEnded, AttemptOutcome, CallEnded, CallId, CallOutcome, Recorder,
};
use opentelemetry::global::BoxedTracer;
use opentelemetry::metrics::{Counter, Gauge, Histogram, Meter};
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};

pub use backoff_runtime::record::SetRecorderError;

/// The meter's name: the instrumentation scope of every instrument, and of
/// the attempts' spans.
///
/// ```
/// assert_eq!(backoff_opentelemetry::METER, "backoff");
/// ```
pub const METER: &str = "backoff";

/// Histogram buckets in seconds (OpenTelemetry's advice for request
/// durations, extended to a minute for backoff delays).
const SECONDS: [f64; 15] = [
    0.0, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0, 60.0,
];

/// The recorder this crate installs: the instruments, once built.
struct OpenTelemetry {
    instruments: RwLock<Option<Instruments>>,
}

/// The one recorder (not zero-sized: [`is_installed`] knows it by its
/// address).
static RECORDER: OpenTelemetry = OpenTelemetry {
    instruments: RwLock::new(None),
};

struct Instruments {
    attempts: Counter<u64>,
    attempt_duration: Histogram<f64>,
    call_duration: Histogram<f64>,
    retry_delay: Histogram<f64>,
    breaker_state: Gauge<u64>,
    budget_tokens: Gauge<f64>,
    remote_reachable: Gauge<u64>,
    /// The attempts' spans' tracer.
    tracer: BoxedTracer,
    /// The `backoff.call` spans of the calls in flight (see [`CallSpans`]).
    calls: CallSpans,
    /// Whether `tracer` builds spans: cleared at its first span that has no
    /// trace (the no-op provider's, whose tracer stays a no-op), so that
    /// metrics alone pay for no span.
    spans: AtomicBool,
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
            remote_reachable: meter
                .u64_gauge("backoff.remote.reachable")
                .with_description(
                    "Whether a fleet's remote answers: 1 yes, 0 its syncs keep failing and its controls run locally",
                )
                .build(),
            tracer,
            calls: CallSpans::default(),
            spans: AtomicBool::new(true),
        }
    }
}

/// Builds the instruments from the global meter provider (meter
/// [`METER`]) and the tracer from the global tracer provider, and installs
/// this crate's recorder for the process. Call it after installing your
/// providers; calling it again rebuilds the instruments and the tracer from
/// the providers installed then.
///
/// # Panics
///
/// If another recorder was installed with
/// [`backoff_runtime::record::set_recorder`] (a process has one); see
/// [`try_install`].
///
/// ```
/// backoff_opentelemetry::install();
/// backoff_opentelemetry::install(); // rebuilt from the same providers
/// assert!(backoff_opentelemetry::is_installed());
/// ```
pub fn install() {
    if let Err(error) = try_install() {
        panic!("backoff_opentelemetry::install: {error}: this process records elsewhere");
    }
}

/// [`install`], or an error (and the other recorder kept) if another
/// recorder was installed.
///
/// ```
/// use backoff_runtime::record::{self, Recorder};
///
/// struct Mine;
/// impl Recorder for Mine {}
/// static MINE: Mine = Mine;
///
/// record::set_recorder(&MINE).unwrap();
/// assert!(backoff_opentelemetry::try_install().is_err());
/// assert!(!backoff_opentelemetry::is_installed());
/// ```
pub fn try_install() -> Result<(), SetRecorderError> {
    if record::recorder().is_some() && !is_installed() {
        // (Checked first, so that the other recorder's process does not
        // build instruments it will never use.)
        return record::set_recorder(&RECORDER);
    }
    let instruments = Instruments::new(
        &opentelemetry::global::meter(METER),
        opentelemetry::global::tracer(METER),
    );
    let mut slot = RECORDER
        .instruments
        .write()
        .unwrap_or_else(|e| e.into_inner());
    *slot = Some(instruments);
    drop(slot);
    match record::set_recorder(&RECORDER) {
        Ok(()) => Ok(()),
        Err(_) if is_installed() => Ok(()),
        Err(error) => Err(error),
    }
}

/// Whether [`install`] installed this crate's recorder (calls then record
/// into the global providers).
///
/// ```
/// if !backoff_opentelemetry::is_installed() {
///     // Calls record nothing and read no clock.
/// }
/// ```
pub fn is_installed() -> bool {
    record::recorder().is_some_and(|r| core::ptr::addr_eq(r, &RECORDER))
}

/// An attempt's own time: `end - start`.
fn took(attempt: &AttemptEnded) -> Duration {
    attempt.end.saturating_duration_since(attempt.start)
}

impl OpenTelemetry {
    /// Runs `f` with the instruments, if built.
    #[inline]
    fn with(&self, f: impl FnOnce(&Instruments)) {
        let slot = self.instruments.read().unwrap_or_else(|e| e.into_inner());
        if let Some(instruments) = slot.as_ref() {
            f(instruments);
        }
    }
}

impl Recorder for OpenTelemetry {
    /// `backoff.attempts`, `backoff.attempt.duration` and the attempt's
    /// span.
    fn attempt_ended(&self, attempt: &AttemptEnded) {
        self.with(|i| {
            i.span(attempt);
            let outcome = KeyValue::new("outcome", attempt.outcome.as_str());
            let function = KeyValue::new("function", attempt.function);
            i.attempts.add(
                1,
                &[
                    function.clone(),
                    KeyValue::new("attempt.type", attempt.kind.as_str()),
                    outcome.clone(),
                ],
            );
            i.attempt_duration
                .record(took(attempt).as_secs_f64(), &[function, outcome]);
        });
    }

    /// `backoff.call.duration`: `gave_up` with the reason, or `ok`; and
    /// the end of the call's `backoff.call` span, if it has one.
    fn call_ended(&self, call: &CallEnded) {
        self.with(|i| {
            i.calls.end(call);
            let function = KeyValue::new("function", call.function);
            let attempts = KeyValue::new("attempts", attempts_bucket(call.attempts));
            let outcome = KeyValue::new("outcome", call.outcome.as_str());
            let seconds = call.duration.as_secs_f64();
            let CallOutcome::GaveUp(reason) = call.outcome else {
                i.call_duration
                    .record(seconds, &[function, outcome, attempts]);
                return;
            };
            let reason = KeyValue::new("give_up.reason", reason.as_str());
            match call.failure_kind {
                None => i
                    .call_duration
                    .record(seconds, &[function, outcome, reason, attempts]),
                Some(kind) => i.call_duration.record(
                    seconds,
                    &[
                        function,
                        outcome,
                        reason,
                        KeyValue::new("failure.kind", kind),
                        attempts,
                    ],
                ),
            }
        });
    }

    /// `backoff.retry.delay`.
    fn retry_delay(&self, function: &'static str, delay: Duration) {
        self.with(|i| {
            i.retry_delay
                .record(delay.as_secs_f64(), &[KeyValue::new("function", function)]);
        });
    }

    /// `backoff.breaker.state`: 0 closed, 1 half-open, 2 open.
    fn breaker_state(&self, breaker: &'static str, state: CircuitState) {
        self.with(|i| {
            i.breaker_state
                .record(gauge(state), &[KeyValue::new("breaker", breaker)]);
        });
    }

    /// `backoff.budget.tokens`.
    fn budget_tokens(&self, budget: &'static str, tokens: f64) {
        self.with(|i| {
            i.budget_tokens
                .record(tokens, &[KeyValue::new("budget", budget)]);
        });
    }

    /// `backoff.remote.reachable`: 1 when the remote answers, 0 when its
    /// syncs keep failing.
    fn remote_reachable(&self, remote: &str, reachable: bool) {
        self.with(|i| {
            i.remote_reachable.record(
                u64::from(reachable),
                &[KeyValue::new("remote", remote.to_owned())],
            );
        });
    }
}

/// The value of `backoff.breaker.state`.
const fn gauge(state: CircuitState) -> u64 {
    match state {
        CircuitState::Closed => 0,
        CircuitState::HalfOpen => 1,
        CircuitState::Open => 2,
    }
}

/// The `attempts` attribute of `backoff.call.duration`: a bucket of the
/// attempts made, so that a call retried without bound adds no series.
///
/// ```text
/// 0 (refused before its first attempt) · 1 · 2 · 3 · 4-5 · 6-10 · >10
/// ```
const fn attempts_bucket(attempts: u32) -> &'static str {
    match attempts {
        0 => "0",
        1 => "1",
        2 => "2",
        3 => "3",
        4 | 5 => "4-5",
        6..=10 => "6-10",
        _ => ">10",
    }
}

/// The `backoff.call` spans of the calls in flight that began under no
/// span of their caller's, by [`CallId`]: begun when the call's first
/// attempt ends (the attempts' spans are built as they end, and need their
/// parent then), ended with the call. A call whose future is dropped
/// before it ends (a caller's own timeout) is never told ended: its span
/// stays here until its shard holds [`CallSpans::SHARD`] calls, when the
/// shard's spans are all ended (at that time) and forgotten, so the table
/// stays bounded.
struct CallSpans {
    hasher: RandomState,
    shards: [Mutex<HashMap<CallId, CallSpan>>; CallSpans::SHARDS],
}

/// A call's span (in its [`Context`]) and its start on the system clock.
struct CallSpan {
    cx: Context,
    start: SystemTime,
}

impl Default for CallSpans {
    fn default() -> Self {
        CallSpans {
            hasher: RandomState::new(),
            shards: Default::default(),
        }
    }
}

impl CallSpans {
    /// Shards, so that calls on many threads do not wait on one lock.
    const SHARDS: usize = 16;
    /// The calls a shard holds at most.
    const SHARD: usize = 4096;

    fn shard(&self, call: CallId) -> std::sync::MutexGuard<'_, HashMap<CallId, CallSpan>> {
        let index = self.hasher.hash_one(call) as usize % Self::SHARDS;
        self.shards[index].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The parent of an attempt of `attempt.call` that ended at `now`
    /// (under no caller's span), and the call's start on the system clock:
    /// the call's span, begun now if this is its first attempt to end.
    /// `None` when the tracer records nothing (the no-op provider).
    fn parent(
        &self,
        tracer: &BoxedTracer,
        attempt: &AttemptEnded,
        now: SystemTime,
    ) -> Option<(Context, SystemTime)> {
        let mut calls = self.shard(attempt.call);
        if let Some(call) = calls.get(&attempt.call) {
            return Some((call.cx.clone(), call.start));
        }
        let since = attempt.end.saturating_duration_since(attempt.call.start());
        let start = now.checked_sub(since).unwrap_or(now);
        let span = tracer
            .span_builder("backoff.call")
            .with_kind(SpanKind::Internal)
            .with_start_time(start)
            .with_attributes([KeyValue::new("code.function.name", attempt.function)])
            .start_with_context(tracer, &Context::current());
        if !span.span_context().is_valid() {
            return None;
        }
        let cx = Context::current().with_span(span);
        if calls.len() >= Self::SHARD {
            for (_, call) in calls.drain() {
                call.cx.span().end_with_timestamp(now);
            }
        }
        calls.insert(
            attempt.call,
            CallSpan {
                cx: cx.clone(),
                start,
            },
        );
        Some((cx, start))
    }

    /// The call ended: its span, if it has one, ends with its outcome.
    fn end(&self, call: &CallEnded) {
        let Some(span) = self.shard(call.call).remove(&call.call) else {
            return;
        };
        let ended = span.cx.span();
        ended.set_attribute(KeyValue::new("outcome", call.outcome.as_str()));
        ended.set_attribute(KeyValue::new("backoff.attempts", i64::from(call.attempts)));
        if let CallOutcome::GaveUp(reason) = call.outcome {
            ended.set_attribute(KeyValue::new("give_up.reason", reason.as_str()));
            ended.set_status(Status::error(reason.as_str()));
        }
        ended.end_with_timestamp(span.start + call.duration);
    }
}

impl Instruments {
    /// The span of an attempt that ended now (see the crate's "Spans"):
    /// built now with its start, so the sampler decides now. Its parent is
    /// the caller's span, else its call's `backoff.call` span.
    fn span(&self, attempt: &AttemptEnded) {
        if !self.spans.load(Ordering::Relaxed) {
            return;
        }
        let tracer = &self.tracer;
        let now = SystemTime::now();
        let current = Context::current();
        let (parent, start, end) = match current.has_active_span() {
            false => match self.calls.parent(tracer, attempt, now) {
                Some((cx, call)) => {
                    // (Placed in the call's span on the call's clock.)
                    let at = |t: Instant| call + t.saturating_duration_since(attempt.call.start());
                    (cx, at(attempt.start), at(attempt.end))
                }
                None => (current, now.checked_sub(took(attempt)).unwrap_or(now), now),
            },
            true => (current, now.checked_sub(took(attempt)).unwrap_or(now), now),
        };
        let mut attributes = Vec::with_capacity(5);
        attributes.extend([
            KeyValue::new("code.function.name", attempt.function),
            KeyValue::new("attempt.type", attempt.kind.as_str()),
            KeyValue::new("backoff.attempt", i64::from(attempt.number)),
            KeyValue::new("outcome", attempt.outcome.as_str()),
        ]);
        #[cfg(feature = "http")]
        if attempt.number > 1 {
            attributes.push(KeyValue::new(
                "http.request.resend_count",
                i64::from(attempt.number - 1),
            ));
        }
        let mut span = tracer
            .span_builder(attempt.function)
            .with_kind(SpanKind::Internal)
            .with_start_time(start)
            .with_attributes(attributes)
            .start_with_context(tracer, &parent);
        if !span.span_context().is_valid() && !parent.is_telemetry_suppressed() {
            // (A tracer that never traces: an SDK's spans have a trace even
            // when not sampled, unless the context suppresses telemetry.)
            self.spans.store(false, Ordering::Relaxed);
        }
        if !matches!(
            attempt.outcome,
            AttemptOutcome::Ok | AttemptOutcome::Cancelled
        ) {
            span.set_status(Status::error(attempt.outcome.as_str()));
        }
        span.end_with_timestamp(end);
    }
}

/// `docs/metrics.md`, whose snippets compile and run as this crate's
/// doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/metrics.md")]
struct MetricsGuide;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_buckets() {
        let buckets: Vec<_> = [0, 1, 2, 3, 4, 5, 6, 10, 11, u32::MAX]
            .into_iter()
            .map(attempts_bucket)
            .collect();
        assert_eq!(
            buckets,
            [
                "0", "1", "2", "3", "4-5", "4-5", "6-10", "6-10", ">10", ">10"
            ]
        );
    }

    #[test]
    fn breaker_gauge_values() {
        assert_eq!(
            [
                CircuitState::Closed,
                CircuitState::HalfOpen,
                CircuitState::Open
            ]
            .map(gauge),
            [0, 1, 2]
        );
    }

    /// Not installed in this process (the unit tests install nothing): the
    /// recorder exists, but calls do not reach it.
    #[test]
    fn nothing_installed_until_install() {
        assert!(!is_installed());
        assert!(record::recorder().is_none());
    }
}
