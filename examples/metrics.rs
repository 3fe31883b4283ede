//! `backoff-opentelemetry`'s metrics, exported as Prometheus text: the
//! exposition format a Prometheus server scrapes from `/metrics` (and that
//! most collectors, the OpenTelemetry Collector's `prometheus` receiver
//! included, read). Chosen over OTLP to stdout because the text is what an
//! operator actually reads and alerts on, one line per series, and the
//! exporter needs no collector running and no async runtime: the example
//! prints exactly what a scrape would return.
//!
//! It installs an SDK meter provider with the `opentelemetry-prometheus`
//! reader as the global provider, calls `backoff_opentelemetry::install()`,
//! then runs a flaky call under `Policy::retry`, a call that gives up, a call
//! that `when_ok` retries, and a call through a named breaker that opens, and
//! prints the registry through `prometheus::TextEncoder`. Run it with:
//!
//! ```text
//! cargo run --example metrics              # the histograms' `_bucket` lines left out
//! cargo run --example metrics -- --buckets # the whole scrape
//! ```
//!
//! Prometheus names follow OpenTelemetry's translation: `backoff.attempts`
//! becomes `backoff_attempts_total`, the histograms in seconds
//! `backoff_call_duration_seconds`, and attributes become labels
//! (`attempt.type` → `attempt_type`).

use std::time::Duration;

use backoff_runtime::{CircuitBreaker, CircuitOpen, Policy};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use prometheus::{Encoder, TextEncoder};

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
static POLL: Policy = Policy::constant(Duration::from_millis(2))
    .attempts(5)
    .named("example::poll_job");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The application's set-up: a registry, the Prometheus reader, the
    // global provider; then turn the retry metrics on.
    let registry = prometheus::Registry::new();
    let exporter = opentelemetry_prometheus::exporter()
        .with_registry(registry.clone())
        .without_target_info()
        .build()?;
    let provider = SdkMeterProvider::builder().with_reader(exporter).build();
    opentelemetry::global::set_meter_provider(provider.clone());
    backoff_opentelemetry::install();

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

    // A call that gives up twice, through the breaker, which then opens,
    // and a third call it refuses.
    for _ in 0..3 {
        let charged: Result<(), Error> = CHARGE
            .retrying(|| Err(Error::Unavailable))
            .circuit(&PAYMENTS)
            .call();
        println!("# charge: {charged:?}, breaker {:?}", PAYMENTS.state());
    }

    // A job polled until done: `when_ok` retries the `Ok("running")`s.
    let mut polls = 0;
    let job: Result<&str, Error> = POLL
        .retrying(|| {
            polls += 1;
            Ok(if polls < 3 { "running" } else { "done" })
        })
        .when_ok(|status: &&str| *status == "running")
        .call();
    println!("# poll_job: {job:?}\n");

    // What a scrape of `/metrics` returns (by default without the
    // histograms' 15 `_bucket` lines per series, to stay readable).
    let buckets = std::env::args().any(|a| a == "--buckets");
    let mut text = Vec::new();
    TextEncoder::new().encode(&registry.gather(), &mut text)?;
    for line in String::from_utf8(text)?.lines() {
        if buckets || !line.contains("_bucket{") {
            println!("{line}");
        }
    }
    provider.shutdown()?;
    Ok(())
}
