//! `backoff-opentelemetry`'s span per attempt, read back through the
//! SDK's in-memory span exporter: one span per attempt that ended, named by
//! the function, with its number, type, outcome and (with this crate's
//! feature `http`: `cargo test -p backoff-opentelemetry --features http`,
//! and in `cargo test --workspace`, whose root package turns it on)
//! `http.request.resend_count` on resends; its duration the attempt's own
//! on tokio's paused clock; a child of the caller's span, or else of the
//! call's `backoff.call` span; and not recorded when the provider's
//! sampler says no.
//!
//! The tracer provider is process-wide (this file is its own process) and
//! the tests run in parallel: each reads only the spans of its own
//! function.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Duration;

use backoff_runtime::retry;
use opentelemetry::trace::{
    Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId,
    TraceState, Tracer, TracerProvider as _,
};
use opentelemetry::{Context, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, Sampler, SdkTracerProvider, SpanData};

/// The provider installed as the global one (its sampler follows a
/// parent's decision, and samples every root), and its exporter.
fn setup() -> &'static (SdkTracerProvider, InMemorySpanExporter) {
    static SETUP: OnceLock<(SdkTracerProvider, InMemorySpanExporter)> = OnceLock::new();
    SETUP.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_sampler(Sampler::ParentBased(Box::new(Sampler::AlwaysOn)))
            .with_simple_exporter(exporter.clone())
            .build();
        opentelemetry::global::set_tracer_provider(provider.clone());
        backoff_opentelemetry::install();
        (provider, exporter)
    })
}

/// The spans of `function` exported so far, by attempt number.
fn spans(function: &str) -> Vec<SpanData> {
    let (_, exporter) = setup();
    let mut spans: Vec<SpanData> = exporter
        .get_finished_spans()
        .expect("spans")
        .into_iter()
        .filter(|s| s.name == function)
        .collect();
    spans.sort_by_key(|s| int(s, "backoff.attempt"));
    spans
}

/// The `backoff.call` spans of `function` exported so far.
fn call_spans(function: &str) -> Vec<SpanData> {
    let (_, exporter) = setup();
    exporter
        .get_finished_spans()
        .expect("spans")
        .into_iter()
        .filter(|s| s.name == "backoff.call")
        .filter(|s| text(s, "code.function.name").as_deref() == Some(function))
        .collect()
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn int(span: &SpanData, key: &str) -> Option<i64> {
    match attribute(span, key) {
        Some(Value::I64(v)) => Some(*v),
        _ => None,
    }
}

fn text(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}

/// `resends` with this crate's feature `http`, else `None` (no attribute).
fn http(resends: Option<i64>) -> Option<i64> {
    resends.filter(|_| cfg!(feature = "http"))
}

fn took(span: &SpanData) -> Duration {
    span.end_time
        .duration_since(span.start_time)
        .expect("ends after it starts")
}

#[retry(immediate, attempts = 5)]
fn third_time(calls: &Cell<u32>) -> Result<u32, &'static str> {
    calls.set(calls.get() + 1);
    if calls.get() < 3 {
        Err("busy")
    } else {
        Ok(calls.get())
    }
}

/// Two failures and a success: three spans, numbered, typed, with their
/// outcome, status, and the resend count on the two resends only.
#[test]
fn each_attempt_is_a_span_with_its_number_outcome_and_resend_count() {
    setup();
    let calls = Cell::new(0);
    assert_eq!(third_time(&calls), Ok(3));
    let spans = spans("attempt_spans::third_time");
    assert_eq!(spans.len(), 3, "{spans:#?}");
    let expect = [
        (1, "original", "error", None),
        (2, "retry", "error", Some(1)),
        (3, "retry", "ok", Some(2)),
    ];
    for (span, (number, kind, outcome, resends)) in spans.iter().zip(expect) {
        assert_eq!(int(span, "backoff.attempt"), Some(number));
        assert_eq!(text(span, "attempt.type").as_deref(), Some(kind));
        assert_eq!(text(span, "outcome").as_deref(), Some(outcome));
        assert_eq!(int(span, "http.request.resend_count"), http(resends));
        assert_eq!(
            text(span, "code.function.name").as_deref(),
            Some("attempt_spans::third_time")
        );
        assert_eq!(span.span_kind, SpanKind::Internal);
        let failed = matches!(span.status, Status::Error { .. });
        assert_eq!(failed, outcome != "ok", "{:?}", span.status);
        assert_eq!(span.instrumentation_scope.name(), "backoff");
    }
}

#[retry(constant("100ms"), jitter = "none", attempts = 3)]
async fn slow_then_ok(calls: &Cell<u32>) -> Result<u32, &'static str> {
    calls.set(calls.get() + 1);
    tokio::time::sleep(Duration::from_millis(30 * u64::from(calls.get()))).await;
    if calls.get() < 2 {
        Err("slow")
    } else {
        Ok(calls.get())
    }
}

/// Each span lasts its attempt's time on the call's clock (tokio's, paused
/// here): 30 ms and 60 ms, not the 100 ms sleep between them.
#[tokio::test(start_paused = true)]
async fn a_span_lasts_its_attempt_on_the_paused_clock() {
    setup();
    let calls = Cell::new(0);
    assert_eq!(slow_then_ok(&calls).await, Ok(2));
    let spans = spans("attempt_spans::slow_then_ok");
    assert_eq!(spans.len(), 2, "{spans:#?}");
    assert_eq!(took(&spans[0]), Duration::from_millis(30));
    assert_eq!(took(&spans[1]), Duration::from_millis(60));
}

#[retry(immediate, attempts = 2)]
fn fails_twice() -> Result<(), &'static str> {
    Err("down")
}

/// The attempts' spans are children of the caller's span, in its trace.
#[test]
fn attempt_spans_are_children_of_the_callers_span() {
    let (provider, _) = setup();
    let tracer = provider.tracer("caller");
    let parent = tracer.start("request");
    let parent_context = parent.span_context().clone();
    let cx = Context::current_with_span(parent);
    {
        let _guard = cx.clone().attach();
        assert_eq!(fails_twice(), Err("down"));
    }
    let spans = spans("attempt_spans::fails_twice");
    assert_eq!(spans.len(), 2, "{spans:#?}");
    for span in &spans {
        assert_eq!(span.parent_span_id, parent_context.span_id());
        assert_eq!(span.span_context.trace_id(), parent_context.trace_id());
    }
}

#[retry(immediate, attempts = 2)]
fn unsampled() -> Result<(), &'static str> {
    Err("down")
}

/// The provider's sampler decides: under a parent the caller's upstream
/// did not sample, a parent-based sampler records no attempt span.
#[test]
fn the_samplers_no_records_no_span() {
    setup();
    let remote = SpanContext::new(
        TraceId::from(0x1234_u128),
        SpanId::from(0x5678_u64),
        TraceFlags::default(),
        true,
        TraceState::default(),
    );
    let cx = Context::new().with_remote_span_context(remote);
    {
        let _guard = cx.attach();
        assert_eq!(unsampled(), Err("down"));
    }
    assert!(spans("attempt_spans::unsampled").is_empty());
    // The same function under no parent is sampled: the filter above is not
    // what hid them.
    assert_eq!(unsampled(), Err("down"));
    assert_eq!(spans("attempt_spans::unsampled").len(), 2);
}

#[retry(hedge = "20ms", attempts = 2)]
async fn hedged(calls: &std::sync::atomic::AtomicU32) -> Result<u32, &'static str> {
    use std::sync::atomic::Ordering;
    let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
    let ms = if n == 1 { 1_000 } else { 10 };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(n)
}

/// A hedge that wins is a span of type `hedge`, 10 ms long; the original
/// it overtook is a span too, `cancelled` after 30 ms (a real request),
/// with no error status; both under the call's span.
#[tokio::test(start_paused = true)]
async fn a_winning_hedge_is_a_span_of_type_hedge() {
    setup();
    let calls = std::sync::atomic::AtomicU32::new(0);
    assert_eq!(hedged(&calls).await, Ok(2));
    let spans = spans("attempt_spans::hedged");
    assert_eq!(spans.len(), 2, "{spans:#?}");
    assert_eq!(text(&spans[0], "attempt.type").as_deref(), Some("original"));
    assert_eq!(text(&spans[0], "outcome").as_deref(), Some("cancelled"));
    assert_eq!(spans[0].status, Status::Unset);
    assert_eq!(took(&spans[0]), Duration::from_millis(30));
    assert_eq!(text(&spans[1], "attempt.type").as_deref(), Some("hedge"));
    assert_eq!(text(&spans[1], "outcome").as_deref(), Some("ok"));
    assert_eq!(took(&spans[1]), Duration::from_millis(10));
    let call = call_spans("attempt_spans::hedged");
    assert_eq!(call.len(), 1, "{call:#?}");
    for span in &spans {
        assert_eq!(span.parent_span_id, call[0].span_context.span_id());
    }
    assert_eq!(took(&call[0]), Duration::from_millis(30));
}

#[retry(hedge = "20ms", attempts = 3)]
async fn third_wins(calls: &std::sync::atomic::AtomicU32) -> Result<u32, &'static str> {
    use std::sync::atomic::Ordering;
    let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
    // Attempts start at 0, 20 and 40 ms; the third answers first, at 50 ms.
    let ms = if n == 3 { 10 } else { 1_000 };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(n)
}

/// Regression: a hedged call's span is numbered as the attempt's `context`
/// is (the third attempt is `backoff.attempt = 3`, a resend of 2), not by
/// the order in which attempts end (it ended first, and was numbered 1).
#[tokio::test(start_paused = true)]
async fn a_hedged_attempt_is_numbered_as_its_context() {
    setup();
    let calls = std::sync::atomic::AtomicU32::new(0);
    assert_eq!(third_wins(&calls).await, Ok(3));
    let spans = spans("attempt_spans::third_wins");
    assert_eq!(spans.len(), 3, "{spans:#?}");
    assert_eq!(int(&spans[2], "backoff.attempt"), Some(3));
    assert_eq!(text(&spans[2], "outcome").as_deref(), Some("ok"));
    assert_eq!(int(&spans[2], "http.request.resend_count"), http(Some(2)));
    assert_eq!(took(&spans[2],), Duration::from_millis(10));
    // The two it overtook, cancelled when it won.
    let cancelled: Vec<_> = spans[..2]
        .iter()
        .map(|s| (int(s, "backoff.attempt"), took(s)))
        .collect();
    assert_eq!(
        cancelled,
        [
            (Some(1), Duration::from_millis(50)),
            (Some(2), Duration::from_millis(30))
        ]
    );
}

#[retry(constant("100ms"), jitter = "none", attempts = 3)]
async fn rooted(calls: &Cell<u32>) -> Result<u32, &'static str> {
    calls.set(calls.get() + 1);
    tokio::time::sleep(Duration::from_millis(10)).await;
    if calls.get() < 3 {
        Err("busy")
    } else {
        Ok(calls.get())
    }
}

/// Without a caller's span, a call is one trace: a `backoff.call` span,
/// a root, lasting the call's time (three 10 ms attempts and two 100 ms
/// sleeps), with its outcome and attempts, parents its attempts, placed
/// in it on the call's clock. Another call is another trace.
#[tokio::test(start_paused = true)]
async fn without_a_callers_span_a_call_span_parents_the_attempts() {
    setup();
    let calls = Cell::new(0);
    assert_eq!(rooted(&calls).await, Ok(3));
    let f = "attempt_spans::rooted";
    let call = call_spans(f);
    assert_eq!(call.len(), 1, "{call:#?}");
    let call = &call[0];
    assert_eq!(call.parent_span_id, SpanId::INVALID, "a root");
    assert_eq!(took(call), Duration::from_millis(230));
    assert_eq!(text(call, "outcome").as_deref(), Some("ok"));
    assert_eq!(int(call, "backoff.attempts"), Some(3));
    assert_eq!(call.status, Status::Unset);
    let attempts = spans(f);
    assert_eq!(attempts.len(), 3, "{attempts:#?}");
    for (i, span) in attempts.iter().enumerate() {
        assert_eq!(span.span_context.trace_id(), call.span_context.trace_id());
        assert_eq!(span.parent_span_id, call.span_context.span_id());
        let offset = Duration::from_millis(110 * i as u64);
        assert_eq!(
            span.start_time.duration_since(call.start_time).ok(),
            Some(offset)
        );
        assert_eq!(took(span), Duration::from_millis(10));
    }
    // A second call: a trace of its own.
    calls.set(2);
    assert_eq!(rooted(&calls).await, Ok(3));
    let call_2 = call_spans(f);
    assert_eq!(call_2.len(), 2);
    assert_ne!(
        call_2[0].span_context.trace_id(),
        call_2[1].span_context.trace_id()
    );
    assert_eq!(int(&call_2[1], "backoff.attempts"), Some(1));
}

#[retry(immediate, attempts = 2)]
async fn down_at_once(_: u32) -> Result<(), &'static str> {
    tokio::time::sleep(Duration::from_millis(5)).await;
    Err("down")
}

/// Calls in flight at once, begun at the same instant, are each a trace,
/// and a call that gives up has its reason and an error status.
#[tokio::test(start_paused = true)]
async fn calls_at_once_are_traces_of_their_own() {
    setup();
    let (a, b) = tokio::join!(down_at_once(1), down_at_once(2));
    assert_eq!((a, b), (Err("down"), Err("down")));
    let f = "attempt_spans::down_at_once";
    let calls = call_spans(f);
    assert_eq!(calls.len(), 2, "{calls:#?}");
    assert_ne!(
        calls[0].span_context.trace_id(),
        calls[1].span_context.trace_id()
    );
    for call in &calls {
        assert_eq!(text(call, "outcome").as_deref(), Some("gave_up"));
        assert_eq!(text(call, "give_up.reason").as_deref(), Some("attempts"));
        assert!(matches!(call.status, Status::Error { .. }));
        let children = spans(f)
            .into_iter()
            .filter(|s| s.parent_span_id == call.span_context.span_id())
            .count();
        assert_eq!(children, 2);
    }
}

#[retry(immediate, attempts = 2)]
fn suppressed() -> Result<(), &'static str> {
    Err("down")
}

/// A call where telemetry is suppressed (an exporter's own calls) has no
/// span, and does not stop the spans of the calls after it (the recorder
/// stops building spans only for a tracer that never traces).
#[test]
fn a_suppressed_call_does_not_turn_spans_off() {
    setup();
    {
        let _guard = Context::enter_telemetry_suppressed_scope();
        assert_eq!(suppressed(), Err("down"));
    }
    assert!(spans("attempt_spans::suppressed").is_empty());
    assert_eq!(suppressed(), Err("down"));
    assert_eq!(spans("attempt_spans::suppressed").len(), 2);
    assert_eq!(call_spans("attempt_spans::suppressed").len(), 1);
}
