//! `backoff_runtime::tower::RetryPolicy` around a real HTTP client: a
//! `ServiceBuilder` stack over `reqwest::Client::execute`, calling an axum
//! server on 127.0.0.1 (an ephemeral port, started by each test on its own
//! runtime) that answers a script of statuses, then 200.
//!
//! 503s and 429s reach the client as `Ok` responses, so `when_ok` classifies
//! them with `backoff_runtime::http`; `when` retries refused connections.
//! Real sockets and tokio's paused clock do not mix, so these tests run on
//! real time with millisecond delays and assert what the server saw (the
//! number of requests, their bodies), never timings. Each test is bounded
//! by [`LIMIT`]; loopback only, plain HTTP.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header::RETRY_AFTER};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use backoff_runtime::tower::RetryPolicy;
use backoff_runtime::{Jitter, Policy, http};
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};

/// No test may take longer than this, whatever goes wrong.
const LIMIT: Duration = Duration::from_secs(5);

/// 4 requests at most, 1, 2, 4 ms apart without a hint; a server's hint
/// above five minutes (the default bound) is not followed.
static POLICY: Policy = Policy::exponential(Duration::from_millis(1))
    .max_delay(Duration::from_millis(10))
    .jitter(Jitter::None)
    .attempts(4);

// ---------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------

/// One scripted answer: a status, and a `Retry-After` to send with it.
type Reply = (u16, Option<&'static str>);

/// The server's state: the script and the request bodies seen.
struct Script {
    replies: Vec<Reply>,
    then: Reply,
    bodies: Mutex<Vec<String>>,
}

async fn answer(State(script): State<Arc<Script>>, body: String) -> Response {
    let n = {
        let mut bodies = script.bodies.lock().unwrap();
        bodies.push(body);
        bodies.len()
    };
    let (status, hint) = script.replies.get(n - 1).copied().unwrap_or(script.then);
    let status = StatusCode::from_u16(status).unwrap();
    let mut response = (status, status.to_string()).into_response();
    if let Some(hint) = hint {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static(hint));
    }
    response
}

/// A server on 127.0.0.1 answering `replies` in turn, then `then` forever.
struct Server {
    url: String,
    script: Arc<Script>,
}

impl Server {
    /// Binds an ephemeral port and spawns the server on the current runtime;
    /// it stops with the runtime, at the end of the test.
    async fn start(replies: Vec<Reply>, then: Reply) -> Server {
        let script = Arc::new(Script {
            replies,
            then,
            bodies: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/", any(answer))
            .with_state(Arc::clone(&script));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Server {
            url: format!("http://{addr}/"),
            script,
        }
    }

    /// Requests seen so far.
    fn hits(&self) -> usize {
        self.script.bodies.lock().unwrap().len()
    }

    /// The bodies of the requests seen so far.
    fn bodies(&self) -> Vec<String> {
        self.script.bodies.lock().unwrap().clone()
    }
}

// ---------------------------------------------------------------------------
// The client stack
// ---------------------------------------------------------------------------

/// A plain HTTP/1.1 client that ignores proxy settings (loopback only) and
/// gives up on a request after a second.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap()
}

/// The stack under test: retries around `reqwest::Client::execute`, which
/// counts the requests it sends in `sent`.
fn retrying(
    client: reqwest::Client,
    sent: &Arc<AtomicUsize>,
) -> impl Service<reqwest::Request, Response = reqwest::Response, Error = reqwest::Error> + use<> {
    let sent = Arc::clone(sent);
    let policy = RetryPolicy::new(&POLICY)
        // No response at all: retry only a refused connection.
        .when(|e: &reqwest::Error| e.is_connect())
        // A response: its status and `Retry-After` decide.
        .when_ok(|r: &reqwest::Response| {
            http::decision_from_headers(r.status(), r.headers(), SystemTime::now())
        })
        // `reqwest::Request` is not `Clone`: its body may be a stream.
        .clone_request_with(reqwest::Request::try_clone);
    ServiceBuilder::new()
        .retry(policy)
        .service(service_fn(move |request| {
            sent.fetch_add(1, SeqCst);
            client.execute(request)
        }))
}

/// Sends `request` through a fresh stack: the outcome and the requests the
/// client sent.
async fn send(
    request: reqwest::RequestBuilder,
) -> (Result<reqwest::Response, reqwest::Error>, usize) {
    let sent = Arc::new(AtomicUsize::new(0));
    let mut service = retrying(client(), &sent);
    let request = request.build().unwrap();
    let outcome = tokio::time::timeout(LIMIT, async { service.ready().await?.call(request).await })
        .await
        .expect("the test took longer than its limit");
    (outcome, sent.load(SeqCst))
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[tokio::test]
async fn unavailable_and_rate_limited_responses_are_retried_until_ok() {
    let server = Server::start(
        vec![(503, None), (503, Some("0")), (429, None)],
        (200, None),
    )
    .await;
    let (outcome, sent) = send(client().get(&server.url)).await;
    let response = outcome.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.text().await.unwrap(), "200 OK");
    assert_eq!((server.hits(), sent), (4, 4));
}

#[tokio::test]
async fn the_attempt_limit_returns_the_last_response_as_it_came() {
    let server = Server::start(vec![], (503, None)).await;
    let (outcome, sent) = send(client().get(&server.url)).await;
    let response = outcome.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.text().await.unwrap(), "503 Service Unavailable");
    assert_eq!((server.hits(), sent), (4, 4));
}

#[tokio::test]
async fn client_errors_are_returned_at_once() {
    for status in [400, 404, 501] {
        let server = Server::start(vec![], (status, Some("0"))).await;
        let (outcome, _) = send(client().get(&server.url)).await;
        assert_eq!(outcome.unwrap().status().as_u16(), status);
        assert_eq!(server.hits(), 1, "{status}");
    }
}

#[tokio::test]
async fn an_hour_long_retry_after_is_not_followed() {
    let server = Server::start(vec![], (503, Some("3600"))).await;
    let (outcome, _) = send(client().get(&server.url)).await;
    assert_eq!(outcome.unwrap().status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn a_post_body_is_sent_again_with_each_attempt() {
    let server = Server::start(vec![(503, None), (502, None)], (200, None)).await;
    let (outcome, _) = send(client().post(&server.url).body("payload")).await;
    assert_eq!(outcome.unwrap().status(), StatusCode::OK);
    assert_eq!(server.bodies(), ["payload", "payload", "payload"]);
}

#[tokio::test]
async fn a_refused_connection_is_retried_by_when() {
    // A port that was just free: nothing listens on it any more.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    drop(listener);
    let (outcome, sent) = send(client().get(&url)).await;
    assert!(outcome.unwrap_err().is_connect());
    assert_eq!(sent, 4);
}

#[tokio::test]
async fn the_stack_serves_many_requests_each_with_its_own_attempts() {
    // Every other request meets a 503 first.
    let server = Server::start(
        vec![(503, None), (200, None), (503, None), (200, None)],
        (503, None),
    )
    .await;
    let sent = Arc::new(AtomicUsize::new(0));
    let mut service = retrying(client(), &sent);
    for _ in 0..2 {
        let request = client().get(&server.url).build().unwrap();
        let response = service.ready().await.unwrap().call(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    // Then the server stays unavailable: a full 4 attempts again.
    let request = client().get(&server.url).build().unwrap();
    let response = service.ready().await.unwrap().call(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!((server.hits(), sent.load(SeqCst)), (8, 8));
}
