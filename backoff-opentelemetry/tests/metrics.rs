//! `backoff-opentelemetry`'s metrics, read back through the SDK's
//! in-memory exporter: exact counts per `attempt.type` and `outcome`, the
//! give-up reason, the call's attempts, durations on tokio's paused clock,
//! and the breaker's state through a full close → open → half-open → closed
//! cycle, for each loop (`Policy::retry`, `retry_async`, `retrying`, tower).
//!
//! The global provider is process-wide and the tests run in parallel: each
//! test names its calls (and breakers, budgets) uniquely and reads only its
//! own series; the exporter keeps cumulative sums, so a read is a total.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use backoff_runtime::{CircuitBreaker, CircuitOpen, Decision, GiveUpReason, Policy, RetryBudget};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};

/// The provider installed as the global one, and its exporter: set up once.
fn setup() -> &'static (SdkMeterProvider, InMemoryMetricExporter) {
    static SETUP: OnceLock<(SdkMeterProvider, InMemoryMetricExporter)> = OnceLock::new();
    SETUP.get_or_init(|| {
        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter.clone()).build())
            .build();
        opentelemetry::global::set_meter_provider(provider.clone());
        backoff_opentelemetry::install();
        (provider, exporter)
    })
}

/// One series: its attributes, and its value (a counter's or a gauge's;
/// a histogram's sum) and a histogram's count.
#[derive(Debug, Clone, PartialEq)]
struct Point {
    attributes: BTreeMap<String, String>,
    value: f64,
    count: u64,
}

impl Point {
    fn get(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// Every series of `metric` whose attribute `key` is `name`, now.
fn read(metric: &str, key: &str, name: &str) -> Vec<Point> {
    let (provider, exporter) = setup();
    provider.force_flush().expect("flush");
    let finished = exporter.get_finished_metrics().expect("metrics");
    let mut points = Vec::new();
    if let Some(last) = finished.last() {
        for scope in last.scope_metrics() {
            if scope.scope().name() != "backoff" {
                continue;
            }
            for m in scope.metrics().filter(|m| m.name() == metric) {
                match m.data() {
                    AggregatedMetrics::F64(d) => collect(d, &mut points),
                    AggregatedMetrics::U64(d) => collect(d, &mut points),
                    AggregatedMetrics::I64(d) => collect(d, &mut points),
                }
            }
        }
    }
    points.retain(|p| p.get(key) == Some(name));
    points
}

/// The series of `metric` for `function` with these attributes (besides
/// `function`), exactly.
fn find(metric: &str, function: &str, with: &[(&str, &str)]) -> Option<Point> {
    let mut found = read(metric, "function", function).into_iter().filter(|p| {
        p.attributes.len() == with.len() + 1 && with.iter().all(|(k, v)| p.get(k) == Some(v))
    });
    let first = found.next();
    assert!(found.next().is_none(), "one series");
    first
}

/// A counter's value (0 if the series is absent).
fn count(function: &str, attempt_type: &str, outcome: &str) -> f64 {
    find(
        "backoff.attempts",
        function,
        &[("attempt.type", attempt_type), ("outcome", outcome)],
    )
    .map_or(0.0, |p| p.value)
}

trait AsF64: Copy {
    fn as_f64(self) -> f64;
}
impl AsF64 for f64 {
    fn as_f64(self) -> f64 {
        self
    }
}
impl AsF64 for u64 {
    fn as_f64(self) -> f64 {
        self as f64
    }
}
impl AsF64 for i64 {
    fn as_f64(self) -> f64 {
        self as f64
    }
}

fn attributes<'a>(kv: impl Iterator<Item = &'a KeyValue>) -> BTreeMap<String, String> {
    kv.map(|kv| {
        let v = match &kv.value {
            Value::String(s) => s.to_string(),
            other => other.to_string(),
        };
        (kv.key.to_string(), v)
    })
    .collect()
}

fn collect<T: AsF64>(data: &MetricData<T>, out: &mut Vec<Point>) {
    match data {
        MetricData::Sum(sum) => out.extend(sum.data_points().map(|p| Point {
            attributes: attributes(p.attributes()),
            value: p.value().as_f64(),
            count: 0,
        })),
        MetricData::Gauge(gauge) => out.extend(gauge.data_points().map(|p| Point {
            attributes: attributes(p.attributes()),
            value: p.value().as_f64(),
            count: 0,
        })),
        MetricData::Histogram(h) => out.extend(h.data_points().map(|p| Point {
            attributes: attributes(p.attributes()),
            value: p.sum().as_f64(),
            count: p.count(),
        })),
        MetricData::ExponentialHistogram(_) => unreachable!("not configured"),
    }
}

/// A histogram's count (0 if the series is absent).
fn observations(metric: &str, function: &str, with: &[(&str, &str)]) -> u64 {
    find(metric, function, with).map_or(0, |p| p.count)
}

#[test]
fn policy_retry_counts_each_attempt_by_type_and_outcome() {
    setup();
    const F: &str = "metrics::policy_retry";
    static POLICY: Policy = Policy::immediate().attempts(5).named(F);
    let mut calls = 0;
    let result = POLICY.retry(|| {
        calls += 1;
        if calls < 3 { Err("flaky") } else { Ok(calls) }
    });
    assert_eq!(result, Ok(3));
    // A second call, at once successful.
    assert_eq!(POLICY.retry(|| Ok::<_, ()>(1)), Ok(1));

    assert_eq!(count(F, "original", "error"), 1.0);
    assert_eq!(count(F, "retry", "error"), 1.0);
    assert_eq!(count(F, "retry", "ok"), 1.0);
    assert_eq!(count(F, "original", "ok"), 1.0);
    assert_eq!(count(F, "original", "rejected_ok"), 0.0);
    assert_eq!(
        observations("backoff.attempt.duration", F, &[("outcome", "error")]),
        2
    );
    assert_eq!(
        observations("backoff.attempt.duration", F, &[("outcome", "ok")]),
        2
    );
    assert_eq!(observations("backoff.retry.delay", F, &[]), 2);
    let call = |attempts| {
        observations(
            "backoff.call.duration",
            F,
            &[("outcome", "ok"), ("attempts", attempts)],
        )
    };
    assert_eq!((call("3"), call("1")), (1, 1));
    // No reason on a success.
    assert!(
        read("backoff.call.duration", "function", F)
            .iter()
            .all(|p| p.get("give_up.reason").is_none())
    );
}

#[test]
fn giving_up_records_the_reason_and_the_calls_made() {
    setup();
    const F: &str = "metrics::give_up";
    let policy = Policy::immediate().attempts(2).named(F);
    let result: Result<(), &str> = policy.retry(|| Err("down"));
    assert_eq!(result, Err("down"));
    assert_eq!(count(F, "original", "error"), 1.0);
    assert_eq!(count(F, "retry", "error"), 1.0);
    let gave_up = find(
        "backoff.call.duration",
        F,
        &[
            ("outcome", "gave_up"),
            ("give_up.reason", "attempts"),
            ("attempts", "2"),
        ],
    )
    .expect("the call's series");
    assert_eq!(gave_up.count, 1);
    assert_eq!(observations("backoff.retry.delay", F, &[]), 1);
}

/// Under a policy with kinds, the give-up series carries the last
/// failure's kind (`failure.kind`).
/// `attempts` on `backoff.call.duration` is a bucket (`1`, `2`, `3`,
/// `4-5`, `6-10`, `>10`): a call retried without bound adds no series per
/// count.
#[test]
fn the_calls_attempts_are_bucketed() {
    setup();
    const F: &str = "metrics::buckets";
    static POLICY: Policy = Policy::immediate().unlimited_attempts().named(F);
    let fails_until = |ok_at: u32| {
        let mut calls = 0;
        POLICY.retry(|| {
            calls += 1;
            if calls < ok_at {
                Err("busy")
            } else {
                Ok(calls)
            }
        })
    };
    for ok_at in [1, 2, 3, 4, 5, 6, 10, 11, 12, 40] {
        assert_eq!(fails_until(ok_at), Ok(ok_at));
    }
    let calls = |bucket| {
        observations(
            "backoff.call.duration",
            F,
            &[("outcome", "ok"), ("attempts", bucket)],
        )
    };
    let buckets = ["1", "2", "3", "4-5", "6-10", ">10"];
    assert_eq!(buckets.map(calls), [1, 1, 1, 2, 2, 3]);
    assert_eq!(read("backoff.call.duration", "function", F).len(), 6);
}

#[test]
fn giving_up_under_kinds_records_the_failure_kind() {
    use backoff_runtime::{Decision, Kind};
    setup();
    const F: &str = "metrics::give_up_kinds";
    static KINDS: [Kind; 2] = [
        Kind::new("Failure::Transient", Policy::immediate().attempts(3)),
        Kind::named("Failure::Permanent"),
    ];
    static POLICY: Policy = Policy::immediate()
        .unlimited_attempts()
        .kinds(&KINDS)
        .named(F);
    let mut calls = 0;
    let result: Result<(), u32> = POLICY
        .retrying(|| {
            calls += 1;
            Err(calls)
        })
        .when(|e: &u32| {
            if *e < 2 {
                Decision::Kind(0)
            } else {
                Decision::Kind(1)
            }
        })
        .call();
    assert_eq!(result, Err(2));
    let gave_up = find(
        "backoff.call.duration",
        F,
        &[
            ("outcome", "gave_up"),
            ("give_up.reason", "stopped"),
            ("failure.kind", "Failure::Permanent"),
            ("attempts", "2"),
        ],
    )
    .expect("the call's series");
    assert_eq!(gave_up.count, 1);
}

#[test]
fn retrying_records_rejected_oks_and_a_stop() {
    setup();
    const F: &str = "metrics::retrying";
    let policy = Policy::immediate().attempts(4).named(F);
    // Two 503s rejected by `when_ok`, then a 200.
    let mut statuses = [503, 503, 200].into_iter();
    let result: Result<u16, String> = policy
        .retrying(|| Ok(statuses.next().unwrap()))
        .when_ok(|s: &u16| *s == 503)
        .call();
    assert_eq!(result, Ok(200));
    assert_eq!(count(F, "original", "rejected_ok"), 1.0);
    assert_eq!(count(F, "retry", "rejected_ok"), 1.0);
    assert_eq!(count(F, "retry", "ok"), 1.0);
    assert_eq!(
        observations("backoff.attempt.duration", F, &[("outcome", "rejected_ok")]),
        2
    );

    // `when` says stop: the reason is `stopped`.
    let result: Result<u16, String> = policy
        .retrying(|| Err("fatal".to_string()))
        .when(|_: &String| Decision::Stop)
        .call();
    assert!(result.is_err());
    assert_eq!(count(F, "original", "error"), 1.0);
    assert_eq!(
        observations(
            "backoff.call.duration",
            F,
            &[
                ("outcome", "gave_up"),
                ("give_up.reason", "stopped"),
                ("attempts", "1")
            ],
        ),
        1
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn retry_async_durations_follow_the_paused_clock() {
    setup();
    const F: &str = "metrics::retry_async";
    let policy = Policy::constant(Duration::from_secs(1))
        .jitter(backoff_runtime::Jitter::None)
        .attempts(3)
        .named(F);
    let mut calls = 0;
    let result = policy
        .retry_async(async || {
            calls += 1;
            tokio::time::sleep(Duration::from_millis(250)).await;
            if calls < 3 { Err("flaky") } else { Ok(calls) }
        })
        .await;
    assert_eq!(result, Ok(3));
    assert_eq!(count(F, "original", "error"), 1.0);
    assert_eq!(count(F, "retry", "error"), 1.0);
    assert_eq!(count(F, "retry", "ok"), 1.0);
    let attempts = find("backoff.attempt.duration", F, &[("outcome", "error")]).unwrap();
    assert_eq!((attempts.count, attempts.value), (2, 0.5));
    let delays = find("backoff.retry.delay", F, &[]).unwrap();
    assert_eq!((delays.count, delays.value), (2, 2.0));
    let call = find(
        "backoff.call.duration",
        F,
        &[("outcome", "ok"), ("attempts", "3")],
    )
    .unwrap();
    // Three attempts of 250 ms and two sleeps of 1 s.
    assert_eq!((call.count, call.value), (1, 2.75));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn retrying_async_timeout_records_the_call_only() {
    setup();
    const F: &str = "metrics::timeout";
    #[derive(Debug)]
    struct Timeout;
    impl From<backoff_runtime::Elapsed> for Timeout {
        fn from(_: backoff_runtime::Elapsed) -> Self {
            Timeout
        }
    }
    let policy = Policy::constant(Duration::from_secs(1))
        .jitter(backoff_runtime::Jitter::None)
        .unlimited_attempts()
        .named(F);
    let result: Result<(), Timeout> = policy
        .retrying_async(async || Err(Timeout))
        .timeout(Duration::from_millis(2500))
        .call_async()
        .await;
    assert!(result.is_err());
    // Attempts at 0, 1 s and 2 s failed; the sleep in flight was cancelled.
    assert_eq!(count(F, "original", "error"), 1.0);
    assert_eq!(count(F, "retry", "error"), 2.0);
    let call = find(
        "backoff.call.duration",
        F,
        &[
            ("outcome", "gave_up"),
            ("give_up.reason", "timeout"),
            ("attempts", "3"),
        ],
    )
    .unwrap();
    assert_eq!((call.count, call.value), (1, 2.5));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn tower_records_every_attempt_and_the_call() {
    use std::sync::atomic::{AtomicU32, Ordering};
    use tower::{Service, ServiceBuilder, ServiceExt};

    setup();
    const F: &str = "metrics::tower";
    static POLICY: Policy = Policy::immediate().attempts(3).named(F);
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let mut service = ServiceBuilder::new()
        .retry(backoff_runtime::tower::RetryPolicy::new(&POLICY))
        .service_fn(|_: u32| async {
            if CALLS.fetch_add(1, Ordering::SeqCst) < 1 {
                Err("flaky")
            } else {
                Ok(7)
            }
        });
    assert_eq!(service.ready().await.unwrap().call(1).await, Ok(7));
    assert_eq!(count(F, "original", "error"), 1.0);
    assert_eq!(count(F, "retry", "ok"), 1.0);
    assert_eq!(
        observations(
            "backoff.call.duration",
            F,
            &[("outcome", "ok"), ("attempts", "2")]
        ),
        1
    );

    // Always failing: the last attempt is seen too (with recording on, the
    // policy clones the request for it), and the call gives up.
    CALLS.store(0, Ordering::SeqCst);
    let mut failing = ServiceBuilder::new()
        .retry(backoff_runtime::tower::RetryPolicy::new(&POLICY))
        .service_fn(|_: u32| async { Err::<u32, _>("down") });
    assert_eq!(failing.ready().await.unwrap().call(1).await, Err("down"));
    assert_eq!(count(F, "original", "error"), 2.0);
    assert_eq!(count(F, "retry", "error"), 2.0);
    assert_eq!(
        observations(
            "backoff.call.duration",
            F,
            &[
                ("outcome", "gave_up"),
                ("give_up.reason", "attempts"),
                ("attempts", "3")
            ],
        ),
        1
    );
}

#[derive(Debug, PartialEq)]
enum Error {
    Down,
    Open,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

/// The breaker's gauge, now (`None` before its first change).
fn breaker_state(name: &str) -> Option<f64> {
    let points = read("backoff.breaker.state", "breaker", name);
    assert!(points.len() <= 1);
    points.first().map(|p| p.value)
}

// On tokio's paused clock (the async loop reads it, and so does the
// breaker through it): a real 40 ms cooldown raced the machine's load.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn breaker_state_through_a_full_cycle_and_a_refused_call() {
    setup();
    const F: &str = "metrics::breaker";
    const B: &str = "metrics::breaker::payments";
    static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_millis(40)).named(B);
    let policy = Policy::immediate().attempts(1).named(F);
    assert_eq!(breaker_state(B), None, "closed, never changed");

    // A failure opens it.
    let result: Result<(), Error> = policy
        .retrying_async(async || Err(Error::Down))
        .circuit(&BREAKER)
        .call_async()
        .await;
    assert_eq!(result, Err(Error::Down));
    assert_eq!(breaker_state(B), Some(2.0), "open");

    // Open: the call is refused, recorded as given up with `circuit_open`
    // after no attempt.
    let result: Result<(), Error> = policy
        .retrying_async(async || Ok(()))
        .circuit(&BREAKER)
        .call_async()
        .await;
    assert_eq!(result, Err(Error::Open));
    assert_eq!(
        observations(
            "backoff.call.duration",
            F,
            &[
                ("outcome", "gave_up"),
                ("give_up.reason", "circuit_open"),
                ("attempts", "0")
            ],
        ),
        1
    );

    // After `open_for`, the trial call finds it half-open, and its success
    // closes it.
    tokio::time::sleep(Duration::from_millis(60)).await;
    let mut during = None;
    let result: Result<(), Error> = policy
        .retrying_async(async || {
            during = breaker_state(B);
            Ok(())
        })
        .circuit(&BREAKER)
        .call_async()
        .await;
    assert_eq!(result, Ok(()));
    assert_eq!(during, Some(1.0), "half-open during the trial");
    assert_eq!(breaker_state(B), Some(0.0), "closed");
    assert_eq!(count(F, "original", "error"), 1.0);
    assert_eq!(count(F, "original", "ok"), 1.0);
    assert_eq!(GiveUpReason::CircuitOpen.as_str(), "circuit_open");
}

#[test]
fn a_named_budget_records_its_tokens() {
    setup();
    const F: &str = "metrics::budget";
    const B: &str = "metrics::budget::payments";
    static BUDGET: RetryBudget = RetryBudget::new(3, 0.5).named(B);
    let policy = Policy::immediate().attempts(3).named(F);
    let result: Result<(), &str> = policy.retrying(|| Err("down")).budget(&BUDGET).call();
    assert!(result.is_err());
    let tokens = |b| {
        read("backoff.budget.tokens", "budget", b)
            .first()
            .map(|p| p.value)
    };
    assert_eq!(tokens(B), Some(1.0), "two retries spent");
    let result: Result<(), &str> = policy.retrying(|| Ok(())).budget(&BUDGET).call();
    assert!(result.is_ok());
    assert_eq!(tokens(B), Some(1.5), "a success refilled half a token");
}

/// A fleet's store tells the recorder when its remote stops answering and
/// answers again (`backoff-redis` with its feature `record`; the store's
/// side is tested in `backoff-redis/testing/tests/recorded.rs`): each
/// remote is a series of `backoff.remote.reachable`, 1 or 0, its last word.
#[test]
fn a_remote_that_stops_answering_reads_zero_until_it_answers() {
    setup();
    let recorder = backoff_runtime::record::recorder().expect("installed");
    let reachable = |remote| {
        let points = read("backoff.remote.reachable", "remote", remote);
        assert!(points.len() <= 1, "one series per remote: {points:?}");
        points.first().map(|p| p.value)
    };
    const A: &str = "metrics::remote::a";
    const B: &str = "metrics::remote::b";
    assert_eq!(reachable(A), None, "nothing told yet");
    recorder.remote_reachable(A, true);
    recorder.remote_reachable(B, true);
    assert_eq!((reachable(A), reachable(B)), (Some(1.0), Some(1.0)));
    recorder.remote_reachable(A, false);
    assert_eq!((reachable(A), reachable(B)), (Some(0.0), Some(1.0)));
    recorder.remote_reachable(A, true);
    assert_eq!((reachable(A), reachable(B)), (Some(1.0), Some(1.0)));
}

/// The attribute's three loops, written out by hand as its expansion
/// emits them (the runtime side of the wiring; see `docs/metrics.md`; the
/// `attribute` module below runs the `#[retry]` functions themselves): the
/// lean plain fn, the compact `async fn`, and the general failure path.
mod expansion {
    use super::*;
    use backoff_runtime::__private as p;
    use p::{Fixed, FixedOrigin, Immediate, RetryResult};

    /// `#[retry(immediate, attempts = 3)]`'s policy on a plain fn, and on
    /// an `async fn`.
    type Sync = Fixed<Immediate, false, 0, 3, { u64::MAX }>;
    type Async = Fixed<Immediate, true, 0, 3, { u64::MAX }>;

    #[test]
    fn lean_plain_fn() {
        setup();
        const F: &str = concat!(module_path!(), "::lean");
        fn lean(calls: &mut u32) -> Result<u32, &'static str> {
            <Result<u32, &'static str> as RetryResult>::retry_blocking(
                p::origin::<Sync>(),
                F,
                p::NoTrace,
                || {
                    p::attempt_sync(|| {
                        *calls += 1;
                        if calls.is_multiple_of(3) {
                            Ok(*calls)
                        } else {
                            Err("flaky")
                        }
                    })
                },
            )
        }
        let mut calls = 0;
        assert_eq!(lean(&mut calls), Ok(3));
        assert_eq!(count(F, "original", "error"), 1.0);
        assert_eq!(count(F, "retry", "error"), 1.0);
        assert_eq!(count(F, "retry", "ok"), 1.0);
        assert_eq!(
            observations(
                "backoff.call.duration",
                F,
                &[("outcome", "ok"), ("attempts", "3")]
            ),
            1
        );
        calls = 10; // 11 fails, 12 succeeds: 2 attempts.
        assert_eq!(lean(&mut calls), Ok(12));
        calls = 12; // 13, 14 fail, 15 succeeds: 3 attempts.
        assert_eq!(lean(&mut calls), Ok(15));
        assert_eq!(count(F, "retry", "ok"), 3.0);
        assert_eq!(count(F, "original", "error"), 3.0);
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn compact_async_fn() {
        setup();
        const F: &str = concat!(module_path!(), "::compact");
        async fn compact(calls: &mut u32) -> Result<u32, &'static str> {
            let mut call = p::compact::<Async>();
            let ended = loop {
                let outcome = p::attempt(async {
                    *calls += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Err("down")
                })
                .await;
                let delay = {
                    let error = match outcome {
                        Ok(v) => {
                            call.accepted(F);
                            break p::Ended::Done(Ok(v));
                        }
                        Err(e) => e,
                    };
                    match call.after_error(F, p::NoTrace, p::RETRY, error) {
                        p::ControlFlow::Continue(delay) => delay,
                        p::ControlFlow::Break(ended) => break ended,
                    }
                };
                if p::sleeps(delay) {
                    tokio::time::sleep(delay).await;
                }
                call.next_attempt();
            };
            ended.result()
        }
        let mut calls = 0;
        assert_eq!(compact(&mut calls).await, Err("down"));
        assert_eq!(calls, 3);
        assert_eq!(count(F, "original", "error"), 1.0);
        assert_eq!(count(F, "retry", "error"), 2.0);
        let attempts = find("backoff.attempt.duration", F, &[("outcome", "error")]).unwrap();
        assert_eq!(attempts.count, 3);
        assert!((attempts.value - 0.3).abs() < 1e-9, "{}", attempts.value);
        let call = find(
            "backoff.call.duration",
            F,
            &[
                ("outcome", "gave_up"),
                ("give_up.reason", "attempts"),
                ("attempts", "3"),
            ],
        )
        .unwrap();
        assert!((call.value - 0.3).abs() < 1e-9, "{}", call.value);
    }

    #[test]
    fn general_failure_path() {
        setup();
        const F: &str = concat!(module_path!(), "::general");
        // A `when_ok` rejecting 503, a `when` stopping on "fatal".
        fn general(responses: &mut Vec<Result<u16, &'static str>>) -> Result<u16, &'static str> {
            let policy = <Sync as FixedOrigin>::ORIGIN.policy;
            let mut call = p::Call::begin(policy, p::SYNC_CLOCK, false, F);
            loop {
                let outcome = p::attempt_sync(|| responses.remove(0));
                let decision = match &outcome {
                    Ok(503) => Decision::Retry,
                    Ok(_) => Decision::Stop,
                    Err("fatal") => Decision::Stop,
                    Err(_) => Decision::Retry,
                };
                match call.after(F, p::NoTrace, decision, outcome) {
                    p::ControlFlow::Continue(delay) => {
                        p::sleep_blocking(delay);
                        call.next_attempt();
                    }
                    p::ControlFlow::Break(ended) => return ended.result(),
                }
            }
        }
        assert_eq!(general(&mut vec![Ok(503), Err("busy"), Ok(200)]), Ok(200));
        assert_eq!(count(F, "original", "rejected_ok"), 1.0);
        assert_eq!(count(F, "retry", "error"), 1.0);
        assert_eq!(count(F, "retry", "ok"), 1.0);
        assert_eq!(general(&mut vec![Err("fatal")]), Err("fatal"));
        assert_eq!(
            observations(
                "backoff.call.duration",
                F,
                &[
                    ("outcome", "gave_up"),
                    ("give_up.reason", "stopped"),
                    ("attempts", "1")
                ],
            ),
            1
        );
        assert_eq!(general(&mut vec![Ok(503), Ok(503), Ok(503)]), Ok(503));
        assert_eq!(
            observations(
                "backoff.call.duration",
                F,
                &[
                    ("outcome", "gave_up"),
                    ("give_up.reason", "attempts"),
                    ("attempts", "3")
                ],
            ),
            1
        );
        assert_eq!(count(F, "retry", "rejected_ok"), 2.0);
        assert_eq!(observations("backoff.retry.delay", F, &[]), 4);
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn hedged_attempts_are_counted_as_hedges() {
    use backoff_runtime::HedgeDelay;
    setup();
    const F: &str = "metrics::hedged";
    let policy = Policy::immediate().attempts(3).named(F);
    let calls = std::sync::atomic::AtomicU32::new(0);
    // Attempt 1 fails at 5 ms and starts attempt 2 (a retry, 100 ms) at
    // once; the delay starts attempt 3 (a hedge) at 25 ms, which wins at
    // 35 ms; attempt 2, still in flight, is cancelled: a real request,
    // counted as `cancelled` (hedging's extra load), after 30 ms.
    let result: Result<u32, &str> = policy
        .hedge_async::<3>(HedgeDelay::After(Duration::from_millis(20)))
        .call(|| {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            async move {
                let (takes, outcome) = match n {
                    1 => (5, Err("down")),
                    2 => (100, Ok(2)),
                    _ => (10, Ok(n)),
                };
                tokio::time::sleep(Duration::from_millis(takes)).await;
                outcome
            }
        })
        .await;
    assert_eq!(result, Ok(3));
    assert_eq!(count(F, "original", "error"), 1.0);
    assert_eq!(count(F, "hedge", "ok"), 1.0);
    assert_eq!(count(F, "retry", "ok"), 0.0);
    assert_eq!(count(F, "retry", "error"), 0.0);
    assert_eq!(count(F, "retry", "cancelled"), 1.0);
    let cancelled = find("backoff.attempt.duration", F, &[("outcome", "cancelled")]).unwrap();
    assert_eq!((cancelled.count, cancelled.value), (1, 0.03));
    let ok = find("backoff.attempt.duration", F, &[("outcome", "ok")]).unwrap();
    assert_eq!((ok.count, ok.value), (1, 0.01));
    let error = find("backoff.attempt.duration", F, &[("outcome", "error")]).unwrap();
    assert_eq!((error.count, error.value), (1, 0.005));
    let call = find(
        "backoff.call.duration",
        F,
        &[("outcome", "ok"), ("attempts", "3")],
    )
    .unwrap();
    assert_eq!((call.count, call.value), (1, 0.035));
}

/// `#[retry]` functions: each records as `module_path!()::name` through
/// each of the expansion's loops (the lean plain fn, the compact `async
/// fn`, the general path with hooks, a breaker or a timeout).
mod attribute {
    use super::*;
    use backoff_runtime::retry;
    use std::cell::Cell;

    /// The `function` of a `#[retry]` function named `name` in this module,
    /// written out: the crate (this test binary, `metrics`), the module,
    /// the name.
    fn function(name: &str) -> String {
        format!("metrics::attribute::{name}")
    }

    /// Fails until the third call.
    fn third_time(calls: &Cell<u32>) -> Result<u32, &'static str> {
        calls.set(calls.get() + 1);
        if calls.get() < 3 {
            Err("flaky")
        } else {
            Ok(calls.get())
        }
    }

    /// The exact `backoff.attempts` of a call retried twice, then
    /// succeeding, and its `backoff.call.duration` (`ok`, 3 attempts).
    fn assert_twice_then_ok(f: &str) {
        assert_eq!(count(f, "original", "error"), 1.0);
        assert_eq!(count(f, "retry", "error"), 1.0);
        assert_eq!(count(f, "retry", "ok"), 1.0);
        assert_eq!(count(f, "original", "ok"), 0.0);
        assert_eq!(count(f, "original", "rejected_ok"), 0.0);
        assert_eq!(count(f, "retry", "rejected_ok"), 0.0);
        assert_eq!(
            observations("backoff.attempt.duration", f, &[("outcome", "error")]),
            2
        );
        assert_eq!(
            observations("backoff.attempt.duration", f, &[("outcome", "ok")]),
            1
        );
        assert_eq!(observations("backoff.retry.delay", f, &[]), 2);
        assert_eq!(
            observations(
                "backoff.call.duration",
                f,
                &[("outcome", "ok"), ("attempts", "3")]
            ),
            1
        );
        assert_eq!(read("backoff.call.duration", "function", f).len(), 1);
    }

    /// The lean loop: a plain fn that names only its policy.
    #[test]
    fn plain_fn_retried_twice_then_ok() {
        setup();
        #[retry(immediate, attempts = 5)]
        fn lean_sync(calls: &Cell<u32>) -> Result<u32, &'static str> {
            third_time(calls)
        }
        let calls = Cell::new(0);
        assert_eq!(lean_sync(&calls), Ok(3));
        let f = function("lean_sync");
        assert_eq!(f, concat!(module_path!(), "::lean_sync"));
        assert_twice_then_ok(&f);
        // The name is the function's alone: no other series in this module.
        assert!(read("backoff.attempts", "function", "lean_sync").is_empty());
    }

    /// The lean loop from a start the function builds (`max_elapsed`).
    #[test]
    fn plain_fn_with_a_deadline_retried_twice_then_ok() {
        setup();
        #[retry(immediate, attempts = 5, max_elapsed = "1h")]
        fn lean_deadline(calls: &Cell<u32>) -> Result<u32, &'static str> {
            third_time(calls)
        }
        let calls = Cell::new(0);
        assert_eq!(lean_deadline(&calls), Ok(3));
        assert_twice_then_ok(&function("lean_deadline"));
    }

    /// A plain fn with a `when` that borrows nothing (the runtime's loop,
    /// with the verdict behind a pointer), and a method: `function` is the
    /// module's path and the method's name.
    #[test]
    fn plain_fn_with_when_retried_twice_then_ok() {
        setup();
        struct Client;
        impl Client {
            #[retry(immediate, attempts = 5, when = |e| *e == "flaky")]
            fn general_sync(&self, calls: &Cell<u32>) -> Result<u32, &'static str> {
                third_time(calls)
            }
        }
        let calls = Cell::new(0);
        assert_eq!(Client.general_sync(&calls), Ok(3));
        assert_twice_then_ok(&function("general_sync"));
    }

    /// The compact `async fn` loop; durations on tokio's paused clock.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn async_fn_retried_twice_then_ok() {
        setup();
        #[retry(constant("1s"), jitter = "none", attempts = 5)]
        async fn compact_async(calls: &Cell<u32>) -> Result<u32, &'static str> {
            tokio::time::sleep(Duration::from_millis(250)).await;
            third_time(calls)
        }
        let calls = Cell::new(0);
        assert_eq!(compact_async(&calls).await, Ok(3));
        let f = function("compact_async");
        assert_twice_then_ok(&f);
        let attempts = find("backoff.attempt.duration", &f, &[("outcome", "error")]).unwrap();
        assert_eq!(attempts.value, 0.5);
        let ok = find("backoff.attempt.duration", &f, &[("outcome", "ok")]).unwrap();
        assert_eq!(ok.value, 0.25);
        let delays = find("backoff.retry.delay", &f, &[]).unwrap();
        assert_eq!(delays.value, 2.0);
        // Three attempts of 250 ms and two sleeps of 1 s.
        let call = find(
            "backoff.call.duration",
            &f,
            &[("outcome", "ok"), ("attempts", "3")],
        )
        .unwrap();
        assert_eq!(call.value, 2.75);
    }

    /// A hedged `async fn`: the hedge that wins is counted as a `hedge`,
    /// under the function's own name.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_hedged_fn_counts_its_hedge() {
        setup();
        #[retry(hedge = "20ms", attempts = 2)]
        async fn hedged_read(calls: &std::sync::atomic::AtomicU32) -> Result<u32, &'static str> {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            tokio::time::sleep(Duration::from_millis(if n == 1 { 1000 } else { 10 })).await;
            Ok(n)
        }
        let calls = std::sync::atomic::AtomicU32::new(0);
        assert_eq!(hedged_read(&calls).await, Ok(2));
        let f = function("hedged_read");
        assert_eq!(count(&f, "hedge", "ok"), 1.0);
        assert_eq!(count(&f, "original", "ok"), 0.0);
        // The original, overtaken, was a request too.
        assert_eq!(count(&f, "original", "cancelled"), 1.0);
        let call = find(
            "backoff.call.duration",
            &f,
            &[("outcome", "ok"), ("attempts", "2")],
        )
        .unwrap();
        assert_eq!(call.value, 0.03);
    }

    /// A hedged `async fn` that runs out of time records the call as given
    /// up for `timeout`.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_hedged_fn_past_its_timeout_records_the_give_up() {
        setup();
        #[retry(hedge = "20ms", attempts = 2, timeout = "30ms")]
        async fn hedged_stuck() -> Result<u32, std::io::Error> {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok(1)
        }
        assert!(hedged_stuck().await.is_err());
        let f = function("hedged_stuck");
        let call = find(
            "backoff.call.duration",
            &f,
            &[
                ("outcome", "gave_up"),
                ("give_up.reason", "timeout"),
                ("attempts", "2"),
            ],
        )
        .unwrap();
        assert_eq!((call.count, call.value), (1, 0.03));
    }

    /// The general path of an `async fn` (an `on_retry`).
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn async_fn_with_on_retry_retried_twice_then_ok() {
        setup();
        #[retry(constant("1s"), jitter = "none", attempts = 5, on_retry = |_, _| ())]
        async fn general_async(calls: &Cell<u32>) -> Result<u32, &'static str> {
            tokio::time::sleep(Duration::from_millis(250)).await;
            third_time(calls)
        }
        let calls = Cell::new(0);
        assert_eq!(general_async(&calls).await, Ok(3));
        let f = function("general_async");
        assert_twice_then_ok(&f);
        let call = find(
            "backoff.call.duration",
            &f,
            &[("outcome", "ok"), ("attempts", "3")],
        )
        .unwrap();
        assert_eq!(call.value, 2.75);
    }

    /// Giving up after the attempts: reason `attempts`, through the lean
    /// loop, the runtime's loop with a `when`, and the general path (whose
    /// `when` names a parameter, and retries all).
    #[test]
    fn giving_up_records_attempts() {
        setup();
        #[retry(immediate, attempts = 2)]
        fn lean_gives_up() -> Result<(), &'static str> {
            Err("down")
        }
        #[retry(immediate, attempts = 3, when = |_| true)]
        fn when_gives_up() -> Result<(), &'static str> {
            Err("down")
        }
        #[retry(immediate, attempts = 3, when = |_| retry)]
        fn general_gives_up(retry: bool) -> Result<(), &'static str> {
            let _ = retry;
            Err("down")
        }
        assert_eq!(lean_gives_up(), Err("down"));
        assert_eq!(when_gives_up(), Err("down"));
        assert_eq!(general_gives_up(true), Err("down"));
        for (name, attempts, retries) in [
            ("lean_gives_up", "2", 1.0),
            ("when_gives_up", "3", 2.0),
            ("general_gives_up", "3", 2.0),
        ] {
            let f = function(name);
            assert_eq!(count(&f, "original", "error"), 1.0, "{name}");
            assert_eq!(count(&f, "retry", "error"), retries, "{name}");
            assert_eq!(count(&f, "retry", "ok"), 0.0, "{name}");
            let call = find(
                "backoff.call.duration",
                &f,
                &[
                    ("outcome", "gave_up"),
                    ("give_up.reason", "attempts"),
                    ("attempts", attempts),
                ],
            );
            assert_eq!(call.map(|c| c.count), Some(1), "{name}");
            assert_eq!(read("backoff.call.duration", "function", &f).len(), 1);
        }
    }

    /// A `fallback` that replaces the error: the call still gave up
    /// (`attempts`), whatever the fallback returns.
    #[test]
    fn a_fallback_does_not_hide_the_give_up() {
        setup();
        #[retry(immediate, attempts = 2, fallback = |_, _| Ok(0))]
        fn with_fallback() -> Result<u32, &'static str> {
            Err("down")
        }
        assert_eq!(with_fallback(), Ok(0));
        let f = function("with_fallback");
        assert_eq!(count(&f, "original", "error"), 1.0);
        assert_eq!(count(&f, "retry", "error"), 1.0);
        assert_eq!(
            observations(
                "backoff.call.duration",
                &f,
                &[
                    ("outcome", "gave_up"),
                    ("give_up.reason", "attempts"),
                    ("attempts", "2")
                ],
            ),
            1
        );
        assert_eq!(read("backoff.call.duration", "function", &f).len(), 1);
    }

    /// `when_ok`: an `Ok` it rejects is `rejected_ok`; a call whose last
    /// `Ok` is rejected gives up (`attempts`) with it.
    #[test]
    fn rejected_oks() {
        setup();
        #[retry(immediate, attempts = 3, when_ok = |s: &u16| *s == 503)]
        fn status(statuses: &mut Vec<u16>) -> Result<u16, &'static str> {
            Ok(statuses.remove(0))
        }
        assert_eq!(status(&mut vec![503, 503, 200]), Ok(200));
        let f = function("status");
        assert_eq!(count(&f, "original", "rejected_ok"), 1.0);
        assert_eq!(count(&f, "retry", "rejected_ok"), 1.0);
        assert_eq!(count(&f, "retry", "ok"), 1.0);
        assert_eq!(count(&f, "original", "error"), 0.0);
        assert_eq!(
            observations(
                "backoff.attempt.duration",
                &f,
                &[("outcome", "rejected_ok")]
            ),
            2
        );
        assert_eq!(
            observations(
                "backoff.call.duration",
                &f,
                &[("outcome", "ok"), ("attempts", "3")]
            ),
            1
        );
        // Three 503s: the last is returned, the call gave up.
        assert_eq!(status(&mut vec![503, 503, 503]), Ok(503));
        assert_eq!(count(&f, "original", "rejected_ok"), 2.0);
        assert_eq!(count(&f, "retry", "rejected_ok"), 3.0);
        assert_eq!(
            observations(
                "backoff.call.duration",
                &f,
                &[
                    ("outcome", "gave_up"),
                    ("give_up.reason", "attempts"),
                    ("attempts", "3")
                ],
            ),
            1
        );
    }

    /// A breaker's refusal: the call gave up with `circuit_open` after no
    /// attempt, and no attempt is counted.
    #[test]
    fn a_refused_call_records_circuit_open() {
        setup();
        static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(3600));
        #[retry(immediate, attempts = 1, circuit = BREAKER)]
        fn guarded(fail: bool) -> Result<(), Error> {
            if fail { Err(Error::Down) } else { Ok(()) }
        }
        // The failure opens the breaker; the call gives up after 1 attempt.
        assert_eq!(guarded(true), Err(Error::Down));
        let f = function("guarded");
        assert_eq!(count(&f, "original", "error"), 1.0);
        assert_eq!(
            observations("backoff.call.duration", &f, &[("outcome", "gave_up")]),
            0,
            "the reason is always given"
        );
        let gave_up = read("backoff.call.duration", "function", &f);
        assert_eq!(gave_up.len(), 1);
        assert_eq!(gave_up[0].get("attempts"), Some("1"));
        // Open: refused before its attempt.
        assert_eq!(guarded(false), Err(Error::Open));
        assert_eq!(
            observations(
                "backoff.call.duration",
                &f,
                &[
                    ("outcome", "gave_up"),
                    ("give_up.reason", "circuit_open"),
                    ("attempts", "0")
                ],
            ),
            1
        );
        assert_eq!(count(&f, "original", "ok"), 0.0);
        assert_eq!(count(&f, "original", "error"), 1.0);
    }

    /// A throttle's rejection: the call gave up with `rejected` after no
    /// attempt; the calls it let through record their attempt.
    #[test]
    fn a_rejected_call_records_rejected() {
        setup();
        #[derive(Debug, PartialEq)]
        enum Shed {
            Overloaded,
            Throttled,
        }
        impl From<backoff_runtime::Rejected> for Shed {
            fn from(_: backoff_runtime::Rejected) -> Self {
                Shed::Throttled
            }
        }
        static THROTTLE: backoff_runtime::AdaptiveThrottle =
            backoff_runtime::AdaptiveThrottle::new(2.0, Duration::from_secs(3600));
        #[retry(immediate, attempts = 1, throttle = THROTTLE)]
        fn shed() -> Result<(), Shed> {
            Err(Shed::Overloaded)
        }
        let (mut ran, mut rejected) = (0.0, 0);
        for _ in 0..100 {
            match shed() {
                Err(Shed::Overloaded) => ran += 1.0,
                Err(Shed::Throttled) => rejected += 1,
                Ok(()) => unreachable!("`shed` always fails"),
            }
        }
        assert!(rejected > 0 && ran > 0.0, "{rejected} rejected, {ran} ran");
        let f = function("shed");
        assert_eq!(count(&f, "original", "error"), ran);
        let reason = |reason, attempts| {
            observations(
                "backoff.call.duration",
                &f,
                &[
                    ("outcome", "gave_up"),
                    ("give_up.reason", reason),
                    ("attempts", attempts),
                ],
            )
        };
        assert_eq!(reason("rejected", "0"), rejected);
        assert_eq!(reason("attempts", "1") as f64, ran);
    }

    /// A whole-call `timeout`: reason `timeout`; the attempt it cancelled
    /// records no `backoff.attempts`.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_timeout_records_the_call_only() {
        setup();
        #[derive(Debug)]
        struct Timeout;
        impl From<backoff_runtime::Elapsed> for Timeout {
            fn from(_: backoff_runtime::Elapsed) -> Self {
                Timeout
            }
        }
        #[retry(constant("1s"), jitter = "none", attempts = unlimited, timeout = "1600ms")]
        async fn timed() -> Result<(), Timeout> {
            tokio::time::sleep(Duration::from_millis(400)).await;
            Err(Timeout)
        }
        assert!(timed().await.is_err());
        let f = function("timed");
        // The first attempt failed at 0.4 s; the second, begun at 1.4 s,
        // was in flight when the timer fired at 1.6 s: it ended with no
        // outcome, and the call records the attempt that did end.
        assert_eq!(count(&f, "original", "error"), 1.0);
        assert_eq!(count(&f, "retry", "error"), 0.0);
        assert_eq!(
            observations("backoff.attempt.duration", &f, &[("outcome", "error")]),
            1
        );
        let call = find(
            "backoff.call.duration",
            &f,
            &[
                ("outcome", "gave_up"),
                ("give_up.reason", "timeout"),
                ("attempts", "1"),
            ],
        )
        .unwrap();
        assert_eq!((call.count, call.value), (1, 1.6));
    }
}
