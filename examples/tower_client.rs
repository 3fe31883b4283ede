//! One retry policy, two ways to use it: a `#[retry]` function and a tower
//! `ServiceBuilder` stack around `reqwest`, both retrying a server's 503s
//! (which `reqwest` returns as `Ok` responses) with the same schedule,
//! attempt limit and deadline, and honouring its `Retry-After`.
//!
//! The example starts its own server on 127.0.0.1 (an ephemeral port) that
//! answers two requests in three with 503 (`Retry-After: 0` on the second),
//! and calls it over plain HTTP. Needs the `tower` and `http` features of
//! `backoff-runtime`. It runs in well under a second.
//!
//! ```text
//! cargo run -p backoff-workspace-tests --example tower_client
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header::RETRY_AFTER};
use axum::response::IntoResponse;
use axum::routing::get;
use backoff_runtime::tower::RetryPolicy;
use backoff_runtime::{Decision, Policy, http, retry};
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};

/// The policy, declared once: up to 4 requests, 50 ms, then 100 ms, ...
/// (full jitter) between them, never past 10 s after the first.
static POLICY: Policy = Policy::exponential(Duration::from_millis(50))
    .max_delay(Duration::from_secs(2))
    .attempts(4)
    .max_elapsed(Duration::from_secs(10));

/// `when_ok` for both: a response's status and `Retry-After` decide (503,
/// 429 and most 5xx are retried; a 404 is not).
fn decide(response: &reqwest::Response) -> Decision {
    http::decision_from_headers(response.status(), response.headers(), SystemTime::now())
}

/// `when` for both: retry a refused connection; other transport errors
/// (a timeout, a bad URL) are returned at once.
fn refused(e: &reqwest::Error) -> bool {
    e.is_connect()
}

/// The attribute's side.
#[retry(policy = &POLICY, when = refused, when_ok = decide)]
async fn get_page(
    client: &reqwest::Client,
    url: &str,
) -> Result<reqwest::Response, reqwest::Error> {
    client.get(url).send().await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (url, hits) = serve().await?;
    let client = reqwest::Client::builder()
        .no_proxy() // loopback only
        .timeout(Duration::from_secs(2))
        .build()?;

    let response = get_page(&client, &url).await?;
    println!(
        "#[retry]:     {} after {} requests",
        response.status(),
        hits.swap(0, Ordering::SeqCst)
    );

    // The tower side: the same `static`, as middleware around the client.
    let mut service = ServiceBuilder::new()
        .retry(
            RetryPolicy::new(&POLICY)
                .when(refused)
                .when_ok(decide)
                // `reqwest::Request` is not `Clone`: its body may be a stream.
                .clone_request_with(reqwest::Request::try_clone),
        )
        .service(service_fn(move |request| client.execute(request)));
    let request = reqwest::Request::new(reqwest::Method::GET, url.parse()?);
    let response = service.ready().await?.call(request).await?;
    println!(
        "tower layer:  {} after {} requests",
        response.status(),
        hits.load(Ordering::SeqCst)
    );
    Ok(())
}

/// A server on 127.0.0.1 answering 503, 503 with `Retry-After: 0`, 200, and
/// so on; returns its URL and request counter.
async fn serve() -> std::io::Result<(String, Arc<AtomicUsize>)> {
    async fn answer(State(hits): State<Arc<AtomicUsize>>) -> axum::response::Response {
        match hits.fetch_add(1, Ordering::SeqCst) % 3 {
            0 => StatusCode::SERVICE_UNAVAILABLE.into_response(),
            1 => (StatusCode::SERVICE_UNAVAILABLE, [(RETRY_AFTER, "0")]).into_response(),
            _ => (StatusCode::OK, "hello").into_response(),
        }
    }
    let hits = Arc::new(AtomicUsize::new(0));
    let app = Router::new()
        .route("/", get(answer))
        .with_state(Arc::clone(&hits));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((url, hits))
}
