//! `#[retry]` against a real HTTP server: an axum server on 127.0.0.1 (an
//! ephemeral port, started by each test on its own runtime) answers a script
//! of error responses, with or without `Retry-After`, then 200; a reqwest
//! client function under `#[retry(when = ...)]` classifies them with
//! `backoff_runtime::http`.
//!
//! Each test asserts how many requests the server saw and the waits the
//! retry loop asked for. The waits are recorded by an injected sleep
//! ([`record_and_sleep_briefly`]) that sleeps a millisecond instead, so a
//! `Retry-After: 2` costs no real time; one test sleeps for real (one
//! second). Every test is bounded by [`LIMIT`]; loopback only, plain HTTP.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header::RETRY_AFTER};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use backoff_runtime::{Decision, RetryEvent, http, retry};
use reqwest::header::HeaderMap;

const MS: fn(u64) -> Duration = Duration::from_millis;
const SECS: fn(u64) -> Duration = Duration::from_secs;

/// No test may take longer than this, whatever goes wrong.
const LIMIT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------

/// One scripted answer.
#[derive(Debug, Clone, Copy)]
enum Reply {
    /// 200 with the body "ok".
    Ok,
    /// This status, no `Retry-After`.
    Status(u16),
    /// This status with `Retry-After: <text>`, sent as is.
    Hint(u16, &'static str),
    /// This status with `Retry-After` as an HTTP-date this many seconds after
    /// the server's clock at the time of the response.
    DateIn(u16, u64),
}

/// The server's state: the script and the requests seen.
struct Script {
    replies: Vec<Reply>,
    /// The answer to every request past the script.
    then: Reply,
    hits: AtomicUsize,
}

async fn answer(State(script): State<Arc<Script>>) -> Response {
    let n = script.hits.fetch_add(1, Ordering::SeqCst);
    let reply = script.replies.get(n).copied().unwrap_or(script.then);
    let (status, hint) = match reply {
        Reply::Ok => return (StatusCode::OK, "ok").into_response(),
        Reply::Status(s) => (s, None),
        Reply::Hint(s, text) => (s, Some(HeaderValue::from_static(text))),
        Reply::DateIn(s, secs) => {
            let date = httpdate::fmt_http_date(SystemTime::now() + SECS(secs));
            (s, Some(HeaderValue::from_str(&date).unwrap()))
        }
    };
    let status = StatusCode::from_u16(status).unwrap();
    let mut response = (status, status.to_string()).into_response();
    if let Some(hint) = hint {
        response.headers_mut().insert(RETRY_AFTER, hint);
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
    /// it stops with the runtime, at the end of the test. Also clears the
    /// sleeps recorded on this thread.
    async fn start(replies: Vec<Reply>, then: Reply) -> Server {
        let script = Arc::new(Script {
            replies,
            then,
            hits: AtomicUsize::new(0),
        });
        let app = Router::new()
            .route("/", get(answer))
            .with_state(Arc::clone(&script));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        take_sleeps();
        Server {
            url: format!("http://{addr}/"),
            script,
        }
    }

    /// Requests seen so far.
    fn hits(&self) -> usize {
        self.script.hits.load(Ordering::SeqCst)
    }
}

// ---------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------

/// A plain HTTP/1.1 client that ignores proxy settings (loopback only) and
/// gives up on a request after a second.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(SECS(1))
        .build()
        .unwrap()
}

#[derive(Debug)]
enum FetchError {
    /// An error status, with the response's headers.
    Status {
        status: StatusCode,
        headers: HeaderMap,
    },
    /// No response at all: on loopback, a bug in the test.
    Transport(reqwest::Error),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Status { status, headers } => match headers.get(RETRY_AFTER) {
                Some(hint) => write!(f, "HTTP {status}, Retry-After: {hint:?}"),
                None => write!(f, "HTTP {status}"),
            },
            FetchError::Transport(e) => write!(f, "no response: {e}"),
        }
    }
}

impl FetchError {
    fn status(&self) -> Option<u16> {
        match self {
            FetchError::Status { status, .. } => Some(status.as_u16()),
            FetchError::Transport(_) => None,
        }
    }
}

/// One GET: the body on 2xx, else the status and headers.
async fn get_once(client: &reqwest::Client, url: &str) -> Result<String, FetchError> {
    let response = client
        .get(url)
        .send()
        .await
        .map_err(FetchError::Transport)?;
    let status = response.status();
    if status.is_success() {
        return response.text().await.map_err(FetchError::Transport);
    }
    Err(FetchError::Status {
        status,
        headers: response.headers().clone(),
    })
}

/// The `when` of these tests: the server's answer decides. A transport
/// error stops at once so that a broken test fails fast.
fn classify(e: &FetchError) -> Decision {
    match e {
        FetchError::Status { status, headers } => {
            http::decision_from_headers(*status, headers, SystemTime::now())
        }
        FetchError::Transport(_) => Decision::Stop,
    }
}

thread_local! {
    /// The sleeps requested on this thread. `#[tokio::test]` runs each test
    /// on its own current-thread runtime, so the client's future, and the
    /// sleep it calls, run on the test's thread.
    static SLEPT: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
}

/// The injected sleep: records the requested wait, sleeps a millisecond.
async fn record_and_sleep_briefly(d: Duration) {
    SLEPT.with_borrow_mut(|s| s.push(d));
    tokio::time::sleep(MS(1)).await;
}

/// The waits recorded on this thread since the last call.
fn take_sleeps() -> Vec<Duration> {
    SLEPT.take()
}

/// Up to 5 requests, a 10 s deadline, a deterministic backoff of 20 ms,
/// 40 ms, 80 ms between retries without a hint; waits recorded, not slept.
#[retry(
    exponential(base = "20ms", max = "100ms"),
    jitter = "none",
    attempts = 5,
    max_elapsed = "10s",
    when = classify,
    sleep = record_and_sleep_briefly
)]
async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, FetchError> {
    get_once(client, url).await
}

/// As [`fetch`] but 3 requests at most, and `when` given the header's text
/// (the client-independent form of the helper).
#[retry(
    exponential(base = "20ms", max = "100ms"),
    jitter = "none",
    attempts = 3,
    when = |e| match e {
        FetchError::Status { status, headers } => http::decision(
            status.as_u16(),
            headers.get(RETRY_AFTER).and_then(|v| v.to_str().ok()),
            SystemTime::now(),
        ),
        FetchError::Transport(_) => Decision::Stop,
    },
    sleep = record_and_sleep_briefly
)]
async fn fetch_three_times(client: &reqwest::Client, url: &str) -> Result<String, FetchError> {
    get_once(client, url).await
}

/// Runs a test body within [`LIMIT`].
async fn bounded<T>(body: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, body)
        .await
        .expect("the test took longer than its limit")
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[tokio::test]
async fn unavailable_with_retry_after_seconds_is_waited_exactly() {
    bounded(async {
        let server = Server::start(
            vec![Reply::Hint(503, "2"), Reply::Hint(503, "2")],
            Reply::Ok,
        )
        .await;
        let body = fetch(&client(), &server.url).await.unwrap();
        assert_eq!(body, "ok");
        assert_eq!(server.hits(), 3);
        assert_eq!(take_sleeps(), [SECS(2), SECS(2)]);
    })
    .await;
}

#[tokio::test]
async fn too_many_requests_then_unavailable() {
    bounded(async {
        let server = Server::start(
            vec![Reply::Hint(429, "1"), Reply::Hint(503, "0")],
            Reply::Ok,
        )
        .await;
        assert_eq!(fetch(&client(), &server.url).await.unwrap(), "ok");
        assert_eq!(server.hits(), 3);
        assert_eq!(take_sleeps(), [SECS(1), Duration::ZERO]);
    })
    .await;
}

#[tokio::test]
async fn retry_after_as_an_http_date() {
    bounded(async {
        let server = Server::start(
            vec![
                Reply::DateIn(503, 3),
                Reply::Hint(429, "Sun, 06 Nov 1994 08:49:37 GMT"), // past: at once
            ],
            Reply::Ok,
        )
        .await;
        assert_eq!(fetch(&client(), &server.url).await.unwrap(), "ok");
        assert_eq!(server.hits(), 3);
        let waits = take_sleeps();
        assert_eq!(waits.len(), 2, "{waits:?}");
        // The date has whole seconds (truncated) and is read a moment after
        // it was written: about 2 s to 3 s.
        assert!(waits[0] > SECS(1) && waits[0] <= SECS(3), "{waits:?}");
        assert_eq!(waits[1], Duration::ZERO);
    })
    .await;
}

#[tokio::test]
async fn an_hour_long_retry_after_gives_up_at_once_under_max_elapsed() {
    bounded(async {
        for hint in [Reply::Hint(503, "3600"), Reply::DateIn(429, 3600)] {
            let server = Server::start(vec![], hint).await;
            let error = fetch(&client(), &server.url).await.unwrap_err();
            assert!(matches!(error.status(), Some(503 | 429)), "{error}");
            assert_eq!(server.hits(), 1, "{hint:?}");
            assert_eq!(take_sleeps(), [], "{hint:?}: no sleep at all");
        }
    })
    .await;
}

#[tokio::test]
async fn client_errors_stop_after_one_request() {
    bounded(async {
        for reply in [
            Reply::Status(404),
            Reply::Hint(404, "1"), // a hint does not make a 404 retryable
            Reply::Status(400),
            Reply::Status(403),
            Reply::Status(501),
        ] {
            let server = Server::start(vec![], reply).await;
            let error = fetch(&client(), &server.url).await.unwrap_err();
            let FetchError::Status { status, .. } = &error else {
                panic!("{error}");
            };
            assert!(status.is_client_error() || status.as_u16() == 501);
            assert_eq!(server.hits(), 1, "{reply:?}");
            assert_eq!(take_sleeps(), [], "{reply:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn too_many_requests_without_a_hint_uses_the_policy_backoff() {
    bounded(async {
        let server = Server::start(vec![Reply::Status(429), Reply::Status(429)], Reply::Ok).await;
        assert_eq!(fetch(&client(), &server.url).await.unwrap(), "ok");
        assert_eq!(server.hits(), 3);
        assert_eq!(take_sleeps(), [MS(20), MS(40)]);
    })
    .await;
}

#[tokio::test]
async fn malformed_hints_fall_back_to_the_policy_backoff() {
    bounded(async {
        let server = Server::start(
            vec![
                Reply::Hint(503, "soon"),
                Reply::Hint(503, "-1"),
                Reply::Hint(429, "1.5"),
                Reply::Hint(503, "Mon, 06 Nov 1994 08:49:37 GMT"), // wrong weekday
            ],
            Reply::Ok,
        )
        .await;
        assert_eq!(fetch(&client(), &server.url).await.unwrap(), "ok");
        assert_eq!(server.hits(), 5);
        assert_eq!(take_sleeps(), [MS(20), MS(40), MS(80), MS(100)]);
    })
    .await;
}

#[tokio::test]
async fn server_errors_are_retried_and_hints_do_not_advance_the_backoff() {
    bounded(async {
        let server = Server::start(
            vec![
                Reply::Status(500),
                Reply::Hint(502, "0"),
                Reply::Status(504),
            ],
            Reply::Ok,
        )
        .await;
        assert_eq!(fetch(&client(), &server.url).await.unwrap(), "ok");
        assert_eq!(server.hits(), 4);
        assert_eq!(take_sleeps(), [MS(20), Duration::ZERO, MS(40)]);
    })
    .await;
}

#[tokio::test]
async fn attempts_bound_the_requests_even_with_hints() {
    bounded(async {
        let server = Server::start(vec![], Reply::Hint(503, "0")).await;
        let error = fetch_three_times(&client(), &server.url).await.unwrap_err();
        assert_eq!(error.status(), Some(503));
        assert_eq!(server.hits(), 3);
        assert_eq!(take_sleeps(), [Duration::ZERO, Duration::ZERO]);
    })
    .await;
}

#[tokio::test]
async fn the_text_form_reads_both_forms_too() {
    bounded(async {
        let server = Server::start(
            vec![Reply::Hint(429, "7"), Reply::DateIn(503, 60)],
            Reply::Ok,
        )
        .await;
        assert_eq!(
            fetch_three_times(&client(), &server.url).await.unwrap(),
            "ok"
        );
        assert_eq!(server.hits(), 3);
        let waits = take_sleeps();
        assert_eq!(waits[0], SECS(7));
        assert!(waits[1] > SECS(58) && waits[1] <= SECS(60), "{waits:?}");
    })
    .await;
}

/// The one test that sleeps for real: tokio's own sleep, `Retry-After: 1`.
#[tokio::test]
async fn a_real_sleep_lasts_what_the_server_asked() {
    #[retry(
        immediate,
        attempts = 3,
        max_elapsed = "4s",
        when = classify,
        on_retry = |_e, ev: &RetryEvent| SLEPT.with_borrow_mut(|s| s.push(ev.delay))
    )]
    async fn fetch_sleeping(client: &reqwest::Client, url: &str) -> Result<String, FetchError> {
        get_once(client, url).await
    }

    bounded(async {
        let server = Server::start(vec![Reply::Hint(503, "1")], Reply::Ok).await;
        let started = Instant::now();
        assert_eq!(fetch_sleeping(&client(), &server.url).await.unwrap(), "ok");
        let elapsed = started.elapsed();
        assert_eq!(server.hits(), 2);
        assert_eq!(take_sleeps(), [SECS(1)], "as told to on_retry");
        // (A lower bound only: other processes can only make it later.)
        assert!(elapsed >= SECS(1), "{elapsed:?}");
    })
    .await;
}
