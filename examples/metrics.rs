//! The Prometheus set-up of `backoff-opentelemetry`, as a service writes
//! it: an SDK meter provider whose reader is `opentelemetry-prometheus`'s
//! exporter into a `prometheus::Registry`, installed as the global
//! provider; `backoff_opentelemetry::install()`; and the registry served
//! as Prometheus text on `/metrics` (here with axum), which a Prometheus
//! server (or the OpenTelemetry Collector's `prometheus` receiver)
//! scrapes.
//!
//! It then makes a few retried calls (a flaky call under `Policy::retry`,
//! calls through a named breaker that opens, a hedged `#[retry]` function
//! whose hedge wins), scrapes its own `/metrics` once over HTTP, prints
//! what a scrape returns, and exits with an error if a series a dashboard
//! needs is missing: CI runs it (`.ci/run`). Run it with:
//!
//! ```text
//! cargo run -p backoff-workspace-tests --example metrics              # the histograms' `_bucket` lines left out
//! cargo run -p backoff-workspace-tests --example metrics -- --buckets # the whole scrape
//! ```
//!
//! Prometheus names follow OpenTelemetry's translation: `backoff.attempts`
//! becomes `backoff_attempts_total`, the histograms in seconds
//! `backoff_call_duration_seconds`, and attributes become labels
//! (`attempt.type` → `attempt_type`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use backoff_runtime::{CircuitBreaker, CircuitOpen, Policy, retry};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use prometheus::{Registry, TextEncoder};

#[derive(Debug)]
enum Error {
    Unavailable,
    Open,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

/// The payment service's breaker: named, so its state is a gauge series.
static PAYMENTS: CircuitBreaker =
    CircuitBreaker::new(2, 1, Duration::from_secs(30)).named("payments");

/// A policy per call site, named as the metrics' `function`.
static FETCH_USER: Policy = Policy::exponential(Duration::from_millis(5))
    .attempts(4)
    .named("example::fetch_user");
static CHARGE: Policy = Policy::immediate().attempts(2).named("example::charge");

/// A read whose first attempt is slow: the hedge started after 20 ms wins,
/// and the original, cancelled, is counted too (`outcome="cancelled"`).
#[retry(hedge = "20ms", attempts = 2)]
async fn read_profile(calls: &AtomicU32) -> Result<&'static str, Error> {
    let n = calls.fetch_add(1, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(if n == 0 { 500 } else { 5 })).await;
    Ok("profile")
}

/// `GET /metrics`: the registry as Prometheus text.
async fn metrics(State(registry): State<Registry>) -> String {
    TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap_or_else(|e| format!("# encoding failed: {e}\n"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The set-up: a registry, the Prometheus reader, the global provider;
    // then turn the retry metrics on.
    let registry = Registry::new();
    let exporter = opentelemetry_prometheus::exporter()
        .with_registry(registry.clone())
        .build()?;
    let provider = SdkMeterProvider::builder().with_reader(exporter).build();
    opentelemetry::global::set_meter_provider(provider.clone());
    backoff_opentelemetry::install();

    // Serve it. (A service binds its own port, say 0.0.0.0:9464.)
    let app = Router::new()
        .route("/metrics", get(metrics))
        .with_state(registry);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/metrics", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });

    // A flaky call: two errors, then a success.
    let mut calls = 0;
    let user = FETCH_USER.retry(|| {
        calls += 1;
        if calls < 3 {
            Err(Error::Unavailable)
        } else {
            Ok("ada")
        }
    });
    println!("# fetch_user: {user:?} after {calls} attempts");

    // Two calls that give up, through the breaker, which then opens, and
    // a third call it refuses.
    for _ in 0..3 {
        let charged: Result<(), Error> = CHARGE
            .retrying(|| Err(Error::Unavailable))
            .circuit(&PAYMENTS)
            .call();
        println!("# charge: {charged:?}, breaker {:?}", PAYMENTS.state());
    }

    // A hedged read.
    let profile = read_profile(&AtomicU32::new(0)).await;
    println!("# read_profile: {profile:?}\n");

    // One scrape, as Prometheus makes it.
    let scrape = reqwest::get(&url).await?.error_for_status()?.text().await?;
    let buckets = std::env::args().any(|a| a == "--buckets");
    for line in scrape.lines() {
        if buckets || !line.contains("_bucket{") {
            println!("{line}");
        }
    }
    // What a dashboard reads: each must be in the scrape.
    let wanted = [
        r#"backoff_attempts_total{attempt_type="retry",function="example::fetch_user",outcome="ok""#,
        r#"backoff_attempts_total{attempt_type="original",function="metrics::read_profile",outcome="cancelled""#,
        r#"backoff_call_duration_seconds_count{attempts="2",function="example::charge",give_up_reason="attempts",outcome="gave_up""#,
        r#"backoff_call_duration_seconds_count{attempts="0",function="example::charge",give_up_reason="circuit_open",outcome="gave_up""#,
        r#"backoff_breaker_state{breaker="payments""#,
        "backoff_retry_delay_seconds_count",
    ];
    let missing: Vec<_> = wanted.iter().filter(|w| !scrape.contains(*w)).collect();
    provider.shutdown()?;
    if !missing.is_empty() {
        return Err(format!("the scrape lacks {missing:?}").into());
    }
    Ok(())
}
