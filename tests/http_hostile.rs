//! `backoff_runtime::http` against a hostile server: every odd `Retry-After`
//! a server (or a broken proxy) can send, end to end over loopback, read by
//! a `#[retry]` function that follows the server's hints with the default
//! bound and no `max_elapsed` (the README's shape, copied without one).
//!
//! The server (axum) and the client (reqwest) run on their own runtime,
//! [`NET`], on the real clock; the retry loop runs on the test's runtime,
//! whose clock is paused and sleeps with `tokio::time::sleep`. That runtime
//! has no timer while a request is in flight, so its clock moves only by the
//! loop's sleeps: the virtual time a call took is exactly what it slept,
//! and "no wait beyond the bound" is asserted as that time, as the delays
//! `on_retry` saw, and as the reason `on_giveup` got.
//!
//! Each case has its outcome in the `http` module docs' tables: a value too
//! long gives up at once, a malformed one falls back to the backoff.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header::RETRY_AFTER};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use backoff_runtime::{Decision, GiveUp, GiveUpReason, RetryEvent, http, retry};
use reqwest::header::HeaderMap;
use tokio::time::Instant;

const SECS: fn(u64) -> Duration = Duration::from_secs;

/// The default bound on one `Retry-After` wait.
const BOUND: Duration = Duration::from_secs(5 * 60);

/// The network's runtime: the servers and the client's connections, on the
/// real clock, shared by the tests of this file.
static NET: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("net")
        .enable_all()
        .build()
        .expect("the network runtime")
});

// ---------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------

/// How a date is written.
#[derive(Debug, Clone, Copy)]
enum Format {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    Imf,
    /// `Sunday, 06-Nov-94 08:49:37 GMT`
    Rfc850,
    /// `Sun Nov  6 08:49:37 1994`
    Asctime,
}

/// One scripted answer.
#[derive(Debug, Clone)]
enum Reply {
    /// 200, "ok".
    Ok,
    /// 503 with one `Retry-After` line per value, byte for byte.
    Unavailable(Vec<Vec<u8>>),
    /// 503 with `Retry-After` an HTTP-date this many seconds after the
    /// server's clock when it answers.
    DateIn(u64, Format),
}

/// A 503 with one `Retry-After` holding `value`.
fn hint(value: impl AsRef<[u8]>) -> Reply {
    Reply::Unavailable(vec![value.as_ref().to_vec()])
}

/// `when` as an HTTP-date in `format`.
fn http_date(when: SystemTime, format: Format) -> String {
    // httpdate writes IMF-fixdate; the other two are rearranged from it.
    let imf = httpdate::fmt_http_date(when);
    let (wday, day, mon, year, time) = (
        &imf[..3],
        &imf[5..7],
        &imf[8..11],
        &imf[12..16],
        &imf[17..25],
    );
    match format {
        Format::Imf => imf.clone(),
        Format::Rfc850 => {
            let long = [
                "Monday",
                "Tuesday",
                "Wednesday",
                "Thursday",
                "Friday",
                "Saturday",
                "Sunday",
            ]
            .into_iter()
            .find(|name| name.starts_with(wday))
            .unwrap();
            format!("{long}, {day}-{mon}-{} {time} GMT", &year[2..])
        }
        Format::Asctime => {
            let day = day
                .strip_prefix('0')
                .map_or(day.to_owned(), |d| format!(" {d}"));
            format!("{wday} {mon} {day} {time} {year}")
        }
    }
}

struct Script {
    replies: Vec<Reply>,
    then: Reply,
    hits: AtomicUsize,
}

async fn answer(State(script): State<Arc<Script>>) -> Response {
    let n = script.hits.fetch_add(1, Ordering::SeqCst);
    let reply = script.replies.get(n).unwrap_or(&script.then).clone();
    let values = match reply {
        Reply::Ok => return (StatusCode::OK, "ok").into_response(),
        Reply::Unavailable(values) => values,
        Reply::DateIn(secs, format) => {
            vec![http_date(SystemTime::now() + SECS(secs), format).into_bytes()]
        }
    };
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, "busy").into_response();
    for value in values {
        let value = HeaderValue::from_bytes(&value).expect("a value axum can send");
        response.headers_mut().append(RETRY_AFTER, value);
    }
    response
}

/// A server on 127.0.0.1, on [`NET`], answering `replies` in turn, then
/// `then` forever; stopped when dropped.
struct Server {
    url: String,
    script: Arc<Script>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    fn start(replies: Vec<Reply>, then: Reply) -> Server {
        let script = Arc::new(Script {
            replies,
            then,
            hits: AtomicUsize::new(0),
        });
        let app = Router::new()
            .route("/", get(answer))
            .with_state(Arc::clone(&script));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let task = NET.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
        Server { url, script, task }
    }

    /// Requests seen so far.
    fn hits(&self) -> usize {
        self.script.hits.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// ---------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------

enum FetchError {
    /// An error status, with the response's headers.
    Status {
        status: StatusCode,
        headers: HeaderMap,
    },
    /// No response.
    Transport(reqwest::Error),
}

/// The status and the `Retry-After` lines, each cut to 40 bytes (some are
/// 100 KB long).
impl std::fmt::Debug for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Status { status, headers } => {
                let hints: Vec<String> = headers
                    .get_all(RETRY_AFTER)
                    .iter()
                    .map(|v| {
                        let cut = &v.as_bytes()[..v.len().min(40)];
                        format!("{} ({} bytes)", cut.escape_ascii(), v.len())
                    })
                    .collect();
                write!(f, "HTTP {status}, Retry-After: {hints:?}")
            }
            FetchError::Transport(e) => write!(f, "no response: {e}"),
        }
    }
}

/// The `when` of these tests: the server's answer decides; no response
/// stops at once.
fn classify(e: &FetchError) -> Decision {
    match e {
        FetchError::Status { status, headers } => {
            http::decision_from_headers(*status, headers, SystemTime::now())
        }
        FetchError::Transport(_) => Decision::Stop,
    }
}

/// One GET on [`NET`] (real clock, a 5 s timeout, loopback only): the body
/// on 2xx, else the status and headers.
async fn get_once(url: &str) -> Result<String, FetchError> {
    static CLIENT: LazyLock<reqwest::Client> = LazyLock::new(|| {
        reqwest::Client::builder()
            .no_proxy()
            .timeout(SECS(5))
            .build()
            .unwrap()
    });
    let url = url.to_owned();
    NET.spawn(async move {
        let response = CLIENT
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
    })
    .await
    .expect("the request task")
}

thread_local! {
    /// What `on_retry` and `on_giveup` saw on this thread (each test runs
    /// its own current-thread runtime, so the hooks run on its thread).
    static SEEN: RefCell<(Vec<Duration>, Option<GiveUp>)> = const { RefCell::new((Vec::new(), None)) };
}

fn note_retry(_: &FetchError, ev: &RetryEvent) {
    SEEN.with_borrow_mut(|(waits, _)| waits.push(ev.delay));
}

fn note_giveup(_: &Result<String, FetchError>, g: &GiveUp) {
    SEEN.with_borrow_mut(|(_, giveup)| *giveup = Some(*g));
}

/// The README's shape without `max_elapsed`: the default bound only. Six
/// requests at most; without a hint, 1 s, 2 s, 4 s, 8 s, 8 s.
#[retry(
    exponential(base = "1s", max = "8s"),
    jitter = "none",
    attempts = 6,
    when = classify,
    on_retry = note_retry,
    on_giveup = note_giveup
)]
async fn fetch(url: &str) -> Result<String, FetchError> {
    get_once(url).await
}

/// As [`fetch`] with the bound raised to an hour.
#[retry(
    exponential(base = "1s", max = "8s"),
    jitter = "none",
    attempts = 6,
    retry_after_max = "1h",
    when = classify,
    on_retry = note_retry,
    on_giveup = note_giveup
)]
async fn fetch_patiently(url: &str) -> Result<String, FetchError> {
    get_once(url).await
}

/// What one call did.
#[derive(Debug)]
struct Call {
    result: Result<String, FetchError>,
    /// Requests the server saw.
    hits: usize,
    /// The waits `on_retry` was told of.
    waits: Vec<Duration>,
    /// Virtual time the call took: its sleeps.
    took: Duration,
    /// Why it gave up, if it did.
    reason: Option<GiveUpReason>,
}

impl Call {
    /// The 503 the call gave up with.
    fn unavailable(&self) -> &HeaderMap {
        match &self.result {
            Err(FetchError::Status { status, headers }) => {
                assert_eq!(*status, StatusCode::SERVICE_UNAVAILABLE, "{self:?}");
                headers
            }
            other => panic!("expected the 503, got {other:?}"),
        }
    }

    /// Gave up at once on the first answer, without sleeping, for the
    /// bound.
    fn assert_gave_up_at_once(&self) {
        self.unavailable();
        assert_eq!(self.hits, 1, "{self:?}");
        assert_eq!(self.waits, [], "{self:?}");
        assert_eq!(self.took, Duration::ZERO, "{self:?}");
        assert_eq!(self.reason, Some(GiveUpReason::Deadline), "{self:?}");
    }

    /// Succeeded after these waits, and took exactly their sum.
    fn assert_ok_after(&self, waits: &[Duration]) {
        assert_eq!(
            self.result.as_ref().ok().map(String::as_str),
            Some("ok"),
            "{self:?}"
        );
        assert_eq!(self.hits, waits.len() + 1, "{self:?}");
        assert_eq!(self.waits, waits, "{self:?}");
        assert_eq!(self.took, waits.iter().sum(), "{self:?}");
        assert_eq!(self.reason, None, "{self:?}");
    }
}

/// Runs `f` against a fresh server answering `replies`, then `then`.
async fn call<F: AsyncFnOnce(&str) -> Result<String, FetchError>>(
    replies: Vec<Reply>,
    then: Reply,
    f: F,
) -> Call {
    let server = Server::start(replies, then);
    SEEN.take();
    let started = Instant::now();
    let result = f(&server.url).await;
    let took = started.elapsed();
    let (waits, giveup) = SEEN.take();
    Call {
        result,
        hits: server.hits(),
        waits,
        took,
        reason: giveup.map(|g| g.reason),
    }
}

/// The backoff of [`fetch`] for `n` retries without a hint.
fn backoff(n: usize) -> Vec<Duration> {
    [1, 2, 4, 8, 8][..n].iter().map(|&s| SECS(s)).collect()
}

// ---------------------------------------------------------------------------
// Too long: give up at once
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn huge_delay_seconds_give_up_at_once() {
    for value in [
        "999999999".to_owned(),
        "9".repeat(30),
        "18446744073709551616".to_owned(), // u64::MAX + 1: saturates
        "301".to_owned(),                  // one second past the bound
    ] {
        let c = call(vec![], hint(&value), fetch).await;
        c.assert_gave_up_at_once();
        assert_eq!(
            c.unavailable()[RETRY_AFTER],
            value.as_str(),
            "the error as the server sent it"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn dates_far_in_the_future_give_up_at_once() {
    for value in [
        "Thu, 31 Dec 2099 23:59:59 GMT",
        "Thu Dec 31 23:59:59 2099", // asctime
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Tuesday, 31-Dec-69 23:59:59 GMT", // RFC 850: '69 is 2069
    ] {
        call(vec![], hint(value), fetch)
            .await
            .assert_gave_up_at_once();
    }
    for format in [Format::Imf, Format::Rfc850, Format::Asctime] {
        // Ten minutes ahead, in each format: past the five-minute bound.
        call(vec![], Reply::DateIn(600, format), fetch)
            .await
            .assert_gave_up_at_once();
    }
}

#[tokio::test(start_paused = true)]
async fn a_100_kb_run_of_digits_gives_up_at_once() {
    let value = "9".repeat(100 * 1024);
    let c = call(vec![], hint(&value), fetch).await;
    c.assert_gave_up_at_once();
    assert_eq!(
        c.unavailable()[RETRY_AFTER].len(),
        100 * 1024,
        "all of it arrived"
    );
}

// ---------------------------------------------------------------------------
// Within the bound: waited exactly
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn five_minutes_is_waited_exactly() {
    let c = call(vec![hint("300"), hint("0300")], Reply::Ok, fetch).await;
    c.assert_ok_after(&[BOUND, BOUND]);
}

#[tokio::test(start_paused = true)]
async fn spaces_around_the_value_are_ignored() {
    // HTTP/1.1 parsers strip them before the helper sees the value; the
    // helper strips them too (the `&str` form).
    let c = call(
        vec![hint(" 5"), hint("5 "), hint("\t5\t"), hint("  5  ")],
        Reply::Ok,
        fetch,
    )
    .await;
    c.assert_ok_after(&[SECS(5); 4]);
}

#[tokio::test(start_paused = true)]
async fn dates_in_every_format_are_waited_until() {
    let c = call(
        vec![
            Reply::DateIn(120, Format::Imf),
            Reply::DateIn(120, Format::Rfc850),
            Reply::DateIn(120, Format::Asctime),
        ],
        Reply::Ok,
        fetch,
    )
    .await;
    assert_eq!(c.result.as_ref().unwrap(), "ok");
    assert_eq!((c.hits, c.waits.len(), c.reason), (4, 3, None), "{c:?}");
    // A date has whole seconds and is read a moment after it was written.
    for wait in &c.waits {
        assert!(*wait > SECS(118) && *wait <= SECS(120), "{c:?}");
    }
    // tokio's timer has whole milliseconds: each sleep ends on the next.
    let slept: Duration = c.waits.iter().sum();
    assert!(
        c.took >= slept && c.took <= slept + Duration::from_millis(3),
        "{c:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn dates_in_the_past_retry_at_once() {
    let c = call(
        vec![
            hint("Sun, 06 Nov 1994 08:49:37 GMT"),
            hint("Sunday, 06-Nov-94 08:49:37 GMT"),
            hint("Sun Nov  6 08:49:37 1994"),
            hint("Thu, 01 Jan 1970 00:00:00 GMT"),
            hint("Friday, 31-Dec-99 23:59:59 GMT"), // RFC 850: '99 is 1999
        ],
        Reply::Ok,
        fetch,
    )
    .await;
    c.assert_ok_after(&[Duration::ZERO; 5]);
}

#[tokio::test(start_paused = true)]
async fn retry_after_max_raises_the_bound() {
    let c = call(vec![hint("3600")], Reply::Ok, fetch_patiently).await;
    c.assert_ok_after(&[SECS(3600)]);
    // Still bounded: a date in 2099 and an hour and a second give up.
    for reply in [hint("Thu, 31 Dec 2099 23:59:59 GMT"), hint("3601")] {
        call(vec![], reply, fetch_patiently)
            .await
            .assert_gave_up_at_once();
    }
}

// ---------------------------------------------------------------------------
// Malformed: the policy's backoff, as without a hint
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn signed_fractional_and_split_values_fall_back_to_the_backoff() {
    let c = call(
        vec![
            hint("-5"),
            hint("+5"),
            hint("1.5"),
            hint("5 0"),
            hint("5, 10"),
        ],
        Reply::Ok,
        fetch,
    )
    .await;
    c.assert_ok_after(&backoff(5));
    let c = call(
        vec![
            hint("-999999999"),
            hint("Mon, 06 Nov 1994 08:49:37 GMT"), // wrong weekday
            hint("2099-12-31T23:59:59Z"),          // ISO 8601
            hint("5s"),
            hint(""),
        ],
        Reply::Ok,
        fetch,
    )
    .await;
    c.assert_ok_after(&backoff(5));
}

#[tokio::test(start_paused = true)]
async fn two_retry_after_lines_fall_back_to_the_backoff() {
    // Whatever the two say, even the same, even one of them valid: the
    // field holds one value, so neither is trusted.
    let c = call(
        vec![
            Reply::Unavailable(vec![b"5".to_vec(), b"5".to_vec()]),
            Reply::Unavailable(vec![b"1".to_vec(), b"999999999".to_vec()]),
            Reply::Unavailable(vec![b"999999999".to_vec(), b"1".to_vec()]),
            Reply::Unavailable(vec![b"soon".to_vec(), b"2".to_vec()]),
        ],
        Reply::Ok,
        fetch,
    )
    .await;
    c.assert_ok_after(&backoff(4));
}

#[tokio::test(start_paused = true)]
async fn values_that_are_not_ascii_fall_back_to_the_backoff() {
    let c = call(
        vec![
            hint(b"\x80\x81"),
            hint(b"5\xff"),
            hint(b"\xff5"),
            hint("\u{e9}"),                              // é: UTF-8, not ASCII
            hint("Sun, 06 Nov 1994 08:49:37 GMT\u{a0}"), // a non-breaking space
        ],
        Reply::Ok,
        fetch,
    )
    .await;
    c.assert_ok_after(&backoff(5));
}

#[tokio::test(start_paused = true)]
async fn a_100_kb_value_that_is_not_a_number_falls_back_to_the_backoff() {
    let c = call(
        vec![
            hint("x".repeat(100 * 1024)),
            hint(format!("{}x", "9".repeat(100 * 1024))),
        ],
        Reply::Ok,
        fetch,
    )
    .await;
    c.assert_ok_after(&backoff(2));
    // And 100 KB of leading zeros is still five seconds.
    let c = call(
        vec![hint(format!("{}5", "0".repeat(100 * 1024)))],
        Reply::Ok,
        fetch,
    )
    .await;
    c.assert_ok_after(&[SECS(5)]);
}

// ---------------------------------------------------------------------------
// Beyond the client: no response at all
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_head_larger_than_the_client_accepts_never_reaches_the_helper() {
    // hyper's client refuses a response head over about 400 KB: reqwest
    // returns an error, which `when` classifies (here: stop).
    let c = call(vec![], hint("9".repeat(1024 * 1024)), fetch).await;
    let Err(FetchError::Transport(e)) = &c.result else {
        panic!("expected no response, got {c:?}");
    };
    assert!(!e.is_timeout(), "{e}");
    assert_eq!(
        (c.hits, c.waits.len(), c.took),
        (1, 0, Duration::ZERO),
        "{c:?}"
    );
    assert_eq!(c.reason, Some(GiveUpReason::Stopped));
}
