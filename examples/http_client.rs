//! An HTTP client that honours the server's `Retry-After`: 429 and 503 wait
//! as long as the server asks (in seconds or as an HTTP-date), other server
//! errors back off exponentially, a 404 is returned at once, and a server
//! that asks for an hour is given up on at once under `max_elapsed`.
//!
//! `reqwest` returns a 503 as `Ok(response)`: `when_ok` classifies the
//! response itself (`backoff_runtime::http::decision_from_headers`, feature
//! `http`), so no wrapper error type is needed, and on giving up the last
//! response is returned unchanged for the caller to read. `when` retries a
//! request that got no response at all; `on_retry` and `on_giveup` print
//! what happens.
//!
//! The example starts its own server on 127.0.0.1 (an ephemeral port) for
//! each scenario, and calls it with `reqwest` over plain HTTP. It runs in
//! about two seconds.
//!
//! ```text
//! cargo run -p backoff-workspace-tests --example http_client
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header::RETRY_AFTER};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use backoff_runtime::{Decision, GiveUp, RetryEvent, http, retry};

/// `when_ok`: the response's status and `Retry-After` decide (a success or
/// a 404 is accepted: `Decision::Stop`).
fn classify(response: &reqwest::Response) -> Decision {
    http::decision_from_headers(response.status(), response.headers(), SystemTime::now())
}

/// `when`: a request that got no response (connection refused, timeout) is
/// retried with the backoff.
fn no_response(_: &reqwest::Error) -> bool {
    true
}

fn describe(outcome: &Result<reqwest::Response, reqwest::Error>) -> String {
    match outcome {
        Ok(response) => match response.headers().get(RETRY_AFTER) {
            Some(hint) => format!("HTTP {} (Retry-After: {hint:?})", response.status()),
            None => format!("HTTP {}", response.status()),
        },
        Err(e) => format!("no response: {e}"),
    }
}

fn print_retry(outcome: &Result<reqwest::Response, reqwest::Error>, ev: &RetryEvent) {
    println!(
        "  attempt {} got {}; retrying in {} ms",
        ev.attempt,
        describe(outcome),
        ev.delay.as_millis()
    );
}

fn print_giveup(outcome: &Result<reqwest::Response, reqwest::Error>, g: &GiveUp) {
    println!(
        "  giving up after {} requests ({}): {}",
        g.attempts,
        g.reason,
        describe(outcome)
    );
}

/// GET with up to 5 requests; without a hint, 100–200 ms, then 200–400 ms,
/// ... between retries (equal jitter); never past 5 s after the first
/// request, whatever the server asks.
#[retry(
    exponential(base = "200ms", max = "2s"),
    jitter = "equal",
    attempts = 5,
    max_elapsed = "5s",
    when_ok = classify,
    when = no_response,
    on_retry = print_retry,
    on_giveup = print_giveup
)]
async fn fetch(client: &reqwest::Client, url: &str) -> Result<reqwest::Response, reqwest::Error> {
    client.get(url).send().await
}

// ---------------------------------------------------------------------------
// A scripted server
// ---------------------------------------------------------------------------

/// One scripted answer: a status and its `Retry-After`, if any.
#[derive(Debug, Clone, Copy)]
enum Hint {
    None,
    /// Sent as is.
    Text(&'static str),
    /// An HTTP-date this many seconds after the response.
    DateIn(u64),
}

struct Script {
    replies: Vec<(u16, Hint)>,
    /// The answer once the script has run out.
    then: (u16, Hint),
    hits: AtomicUsize,
}

async fn answer(State(script): State<Arc<Script>>) -> Response {
    let n = script.hits.fetch_add(1, Ordering::SeqCst);
    let (status, hint) = script.replies.get(n).copied().unwrap_or(script.then);
    let status = StatusCode::from_u16(status).expect("a valid status");
    if status.is_success() {
        return (status, "hello from 127.0.0.1").into_response();
    }
    let mut response = (status, status.to_string()).into_response();
    let hint = match hint {
        Hint::None => None,
        Hint::Text(text) => Some(HeaderValue::from_static(text)),
        Hint::DateIn(secs) => {
            let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(secs));
            HeaderValue::from_str(&date).ok()
        }
    };
    if let Some(hint) = hint {
        response.headers_mut().insert(RETRY_AFTER, hint);
    }
    response
}

/// Starts a server on 127.0.0.1 that answers `replies` in turn, then
/// `then`; returns its URL and request counter.
async fn serve(replies: Vec<(u16, Hint)>, then: (u16, Hint)) -> (String, Arc<Script>) {
    let script = Arc::new(Script {
        replies,
        then,
        hits: AtomicUsize::new(0),
    });
    let app = Router::new()
        .route("/", get(answer))
        .with_state(Arc::clone(&script));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("a local address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/"), script)
}

async fn scenario(
    client: &reqwest::Client,
    title: &str,
    replies: Vec<(u16, Hint)>,
    then: (u16, Hint),
) {
    println!("{title}");
    let (url, script) = serve(replies, then).await;
    let started = Instant::now();
    let result = fetch(client, &url).await;
    let took = started.elapsed().as_millis();
    let requests = match script.hits.load(Ordering::SeqCst) {
        1 => "1 request".to_owned(),
        n => format!("{n} requests"),
    };
    match result {
        Ok(response) => {
            let status = response.status();
            let body = response.text().await.unwrap_or_default();
            println!("  => HTTP {status} {body:?} after {requests}, {took} ms");
        }
        Err(e) => println!("  => no response ({e}) after {requests}, {took} ms"),
    }
    println!();
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let client = reqwest::Client::builder()
        .no_proxy() // loopback only
        .timeout(Duration::from_secs(2))
        .build()
        .expect("a client");

    scenario(
        &client,
        "a busy server (503 Retry-After: 1, 429 with an HTTP-date, 502, then 200):",
        vec![
            (503, Hint::Text("1")),
            (429, Hint::DateIn(1)),
            (502, Hint::None),
        ],
        (200, Hint::None),
    )
    .await;

    scenario(
        &client,
        "a server down for maintenance (503 Retry-After: 3600), under max_elapsed = \"5s\":",
        vec![],
        (503, Hint::Text("3600")),
    )
    .await;

    scenario(
        &client,
        "a missing resource (404, not retried):",
        vec![],
        (404, Hint::None),
    )
    .await;
}
