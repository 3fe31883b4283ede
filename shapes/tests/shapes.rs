//! What the real-world shapes do at run time: clone counts, reborrowed
//! `&mut` arguments, `mut` arguments carried from attempt to attempt,
//! borrowed and `impl Trait` results, and the order of `#[tokio::main]`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use backoff_runtime::retry;
use backoff_shapes::builders::{self, Client, ClientBuilder, REQUEST_CLONES, Request, Transport};
use backoff_shapes::serializers::{self, BufferTooSmall, List};
use backoff_shapes::visitors::{Headers, Missing, PortVisitor};
use backoff_shapes::{Error, extractors, files};

/// `REQUEST_CLONES` is global: the tests that count it take turns.
static COUNTING: Mutex<()> = Mutex::new(());

fn request() -> Request {
    Request {
        url: "http://127.0.0.1/".to_owned(),
        body: b"hello".to_vec(),
    }
}

fn clones_during(f: impl FnOnce()) -> u32 {
    let _turn = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    let before = REQUEST_CLONES.load(Ordering::Relaxed);
    f();
    REQUEST_CLONES.load(Ordering::Relaxed) - before
}

#[test]
fn clone_makes_one_clone_per_attempt() {
    for failures in 0..4 {
        let mut transport = Transport {
            failures,
            ..Transport::default()
        };
        let clones = clones_during(|| {
            assert_eq!(builders::send(&mut transport, request()), Ok(5));
        });
        // Attempts = failures + 1, each with its own clone; the original is
        // dropped when the call returns.
        assert_eq!(clones, failures + 1, "{failures} failures");
        assert_eq!(transport.sent, vec![request()]);
    }
}

#[test]
fn clone_on_giving_up_made_one_clone_per_attempt() {
    let mut transport = Transport {
        failures: 10,
        ..Transport::default()
    };
    let clones = clones_during(|| {
        assert_eq!(
            builders::send(&mut transport, request()),
            Err(Error::Transient)
        );
    });
    assert_eq!(clones, 4, "attempts = 4");
    assert!(transport.sent.is_empty());
}

#[test]
fn clone_in_an_async_fn_makes_one_clone_per_attempt() {
    let mut transport = Transport {
        failures: 2,
        ..Transport::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let clones = clones_during(|| {
        let sent = runtime.block_on(builders::send_async(&mut transport, request()));
        assert_eq!(sent, Ok(5));
    });
    assert_eq!(clones, 3);
}

#[test]
fn clone_self_gives_each_attempt_its_own_builder() {
    let calls = AtomicU32::new(0);
    let reachable = |host: &str| {
        assert_eq!(host, "db");
        calls.fetch_add(1, Ordering::Relaxed) >= 2
    };
    let client = ClientBuilder::default().host("db").connect(&reachable);
    assert_eq!(
        client,
        Ok(Client {
            address: "db:80".to_owned()
        })
    );
    assert_eq!(calls.load(Ordering::Relaxed), 3);
}

#[test]
fn a_reborrowed_buffer_starts_whole_on_every_attempt() {
    let mut buffer = [0u8; 12];
    assert_eq!(
        serializers::write_words(&mut buffer, &[1, 2, 3]),
        Ok(12),
        "the body re-points `dst` as it writes"
    );
    assert_eq!(buffer, [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
    assert_eq!(
        serializers::write_words(&mut buffer[..4], &[7, 8]),
        Err(BufferTooSmall { needed: 8 })
    );
}

/// `attempts = 3`, writing through `&mut` and failing twice.
#[retry(immediate, attempts = 3)]
fn repoint_and_fail(mut dst: &mut [u8], seen: &mut Vec<usize>) -> Result<(), ()> {
    // What this attempt sees: the length the reborrow starts with, and the
    // first byte the previous attempt wrote.
    seen.push(dst.len());
    dst[0] += 1;
    dst = &mut dst[1..];
    dst[0] = 9;
    if seen.len() < 3 { Err(()) } else { Ok(()) }
}

#[test]
fn writes_through_a_reborrow_are_kept_but_the_re_pointing_is_not() {
    let mut buffer = [0u8; 4];
    let mut seen = Vec::new();
    assert_eq!(repoint_and_fail(&mut buffer, &mut seen), Ok(()));
    // Each attempt saw the whole buffer (the re-pointing is the attempt's
    // own), and the previous attempts' writes (the data is shared).
    assert_eq!(seen, [4, 4, 4]);
    assert_eq!(buffer, [3, 9, 0, 0]);
}

/// Each attempt sees `mut` by-value arguments as the previous one left
/// them.
#[retry(immediate, attempts = 5)]
fn countdown(mut remaining: u32, log: &mut Vec<u32>) -> Result<u32, u32> {
    log.push(remaining);
    remaining -= 1;
    if remaining > 0 {
        Err(remaining)
    } else {
        Ok(remaining)
    }
}

#[test]
fn mut_arguments_carry_over_from_attempt_to_attempt() {
    let mut log = Vec::new();
    assert_eq!(countdown(3, &mut log), Ok(0));
    assert_eq!(log, [3, 2, 1]);
}

#[test]
fn writing_twice_through_a_mut_reference_keeps_the_last_write() {
    let mut n = 7;
    assert_eq!(serializers::reset_then_count(&mut n, b"abc"), Ok(()));
    assert_eq!(n, 3);
    assert_eq!(List(vec![1, 2, 3]).to_string(), "1, 2, 3");
    let mut out = Vec::new();
    serializers::write_line(&mut out, "hi").unwrap();
    assert_eq!(out, b"hi\n");
}

#[test]
fn borrowed_and_impl_trait_results() {
    let mut headers = Headers::default();
    assert_eq!(headers.get("host"), Err(Missing));
    assert!(headers.names().is_err());
    headers.insert("host", "example.org");
    assert_eq!(headers.get("host"), Ok("example.org"));
    assert_eq!(headers.names().unwrap().collect::<Vec<_>>(), ["host"]);
}

#[tokio::test]
async fn impl_trait_results_async_and_an_instrumented_mut_self_method() {
    let mut headers = Headers::default();
    headers.insert("a", "1");
    headers.insert("b", "2");
    assert_eq!(headers.count_names().await.unwrap().sum::<usize>(), 1);
    let mut sessions = extractors::Sessions::default();
    assert_eq!(sessions.lookup(7).await.as_deref(), Ok("session-7"));
    assert_eq!(sessions.lookups, 2);
}

#[tokio::test]
async fn a_hedged_read_whose_future_is_send() {
    let replicas = std::sync::Arc::new(extractors::Replicas::default());
    let shared = replicas.clone();
    // Spawned: the hedged future is `Send` (axum handlers need it).
    let read = tokio::spawn(async move { shared.read("k").await });
    assert_eq!(read.await.unwrap().as_deref(), Ok("k@replica-0"));
    // A 4xx stops at once: one read.
    assert_eq!(
        replicas.read("").await,
        Err(axum::http::StatusCode::BAD_REQUEST)
    );
    assert_eq!(replicas.reads.load(std::sync::atomic::Ordering::Relaxed), 2);
}

#[test]
fn serde_visitors_and_serde_json() {
    use serde::de::Visitor;
    use serde::de::value::Error as DeError;
    assert_eq!(PortVisitor.visit_u64::<DeError>(8080), Ok(8080));
    assert!(PortVisitor.visit_u64::<DeError>(70_000).is_err());
    assert_eq!(PortVisitor.visit_str::<DeError>("443"), Ok(443));
    assert_eq!(
        backoff_shapes::visitors::port_of(r#"{"port": 5432}"#).unwrap(),
        5432
    );
    assert!(backoff_shapes::visitors::port_of("{").is_err());
}

#[tokio::test]
async fn an_axum_extractor_reads_the_header() {
    use axum::extract::FromRequestParts;
    let (mut parts, ()) = axum::http::Request::builder()
        .header("x-api-key", "k1")
        .body(())
        .unwrap()
        .into_parts();
    let key = extractors::ApiKey::from_request_parts(&mut parts, &()).await;
    assert_eq!(key, Ok(extractors::ApiKey("k1".to_owned())));
    let (mut parts, ()) = axum::http::Request::new(()).into_parts();
    let key = extractors::ApiKey::from_request_parts(&mut parts, &()).await;
    assert_eq!(key.unwrap_err().0, axum::http::StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn files_borrowed_and_cloned_paths() {
    let dir = std::env::temp_dir().join(format!("backoff-shapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.toml");
    files::write_file(&path, b"port = 1".to_vec())
        .await
        .unwrap();
    assert_eq!(files::read_config(&path).unwrap(), "port = 1");
    assert_eq!(files::read_moved(path.clone()).unwrap(), "port = 1");
    assert_eq!(
        files::read_config(dir.join("missing")).unwrap_err().kind(),
        std::io::ErrorKind::NotFound
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Dropped when the runtime that spawned it is dropped.
struct OnDrop(&'static AtomicU32);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Spawns a task that never ends, holding an `OnDrop`; fails until the
/// third attempt. Returns how many such tasks had been dropped (with their
/// runtime) when the third attempt began.
macro_rules! runtime_probe {
    ($dropped:ident, $attempts:ident) => {{
        let attempt = $attempts.fetch_add(1, Ordering::SeqCst) + 1;
        let guard = OnDrop(&$dropped);
        tokio::spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        });
        tokio::task::yield_now().await;
        if attempt < 3 {
            Err(attempt)
        } else {
            Ok($dropped.load(Ordering::SeqCst))
        }
    }};
}

static MAIN_ABOVE_DROPPED: AtomicU32 = AtomicU32::new(0);
static MAIN_ABOVE_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// `#[tokio::main]` above `#[retry]`: `tokio::main` runs first and turns the
/// function into a blocking one that builds a runtime; `#[retry]` then
/// retries all of it, a new runtime per attempt.
#[tokio::main(flavor = "current_thread")]
#[retry(immediate, attempts = 3)]
async fn tokio_main_above_retry() -> Result<u32, u32> {
    runtime_probe!(MAIN_ABOVE_DROPPED, MAIN_ABOVE_ATTEMPTS)
}

static RETRY_ABOVE_DROPPED: AtomicU32 = AtomicU32::new(0);
static RETRY_ABOVE_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// `#[retry]` above `#[tokio::main]`: the attempts run in one runtime.
#[retry(immediate, attempts = 3)]
#[tokio::main(flavor = "current_thread")]
async fn retry_above_tokio_main() -> Result<u32, u32> {
    runtime_probe!(RETRY_ABOVE_DROPPED, RETRY_ABOVE_ATTEMPTS)
}

#[test]
fn tokio_main_above_retry_builds_a_runtime_per_attempt() {
    // The first two attempts' runtimes, and their tasks, were dropped
    // before the third attempt began.
    assert_eq!(tokio_main_above_retry(), Ok(2));
    assert_eq!(MAIN_ABOVE_ATTEMPTS.load(Ordering::SeqCst), 3);
}

#[test]
fn retry_above_tokio_main_runs_every_attempt_in_one_runtime() {
    assert_eq!(retry_above_tokio_main(), Ok(0));
    assert_eq!(RETRY_ABOVE_ATTEMPTS.load(Ordering::SeqCst), 3);
    // The runtime, and the three tasks, are dropped when the call returns.
    assert_eq!(RETRY_ABOVE_DROPPED.load(Ordering::SeqCst), 3);
}

#[test]
fn a_mut_parameter_in_clone_gets_a_mut_clone() {
    assert_eq!(builders::push_marker(vec![1]), Ok(vec![1, 0xff]));
}

#[test]
fn clone_self_leaves_a_nested_items_self_alone() {
    let counter = builders::Counter { n: 4 };
    assert_eq!(counter.bumped(), Ok(10));
}

#[test]
fn a_body_starting_with_an_item_writes() {
    let mut out = String::new();
    serializers::write_greeting(&mut out).unwrap();
    assert_eq!(out, "hello");
}

/// Reads a `Cell` through `&mut`: reborrowed per attempt, the future holds
/// a unique borrow, so it is `Send` as the function is without `#[retry]`.
#[retry(immediate)]
async fn read_cell(c: &mut std::cell::Cell<u32>) -> Result<u32, ()> {
    Ok(c.get())
}

fn assert_send<T: Send>(value: T) -> T {
    value
}

#[tokio::test]
async fn a_future_reading_a_mut_cell_is_send() {
    let mut cell = std::cell::Cell::new(3);
    assert_eq!(assert_send(read_cell(&mut cell)).await, Ok(3));
}

/// The lints the guide says `#[retry]` hides are those `src/lints.rs` pins
/// as hidden (each under `#[warn(..)]` there, which `-D warnings` turns
/// into a failure the day the lint fires again).
#[test]
fn the_documented_hidden_lints_are_the_pinned_ones() {
    fn clippy_lints(text: &str) -> Vec<String> {
        let mut lints: Vec<String> = text
            .split("clippy::")
            .skip(1)
            .map(|rest| {
                rest.chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect()
            })
            .collect();
        lints.sort();
        lints.dedup();
        lints
    }
    let guide = include_str!("../../docs/guide.md");
    let section = guide
        .split("### Lints the attribute hides")
        .nth(1)
        .and_then(|s| s.split("\n#").next())
        .expect("the guide's section");
    // (Its list: the bullets after the sentence naming the lints that fire.)
    let listed = section.split_once("\n- ").expect("a list").1;
    let lints = include_str!("../src/lints.rs");
    let pinned: Vec<&str> = lints
        .split("// The lints `#[retry]` hides")
        .nth(1)
        .expect("the pinned exceptions")
        .lines()
        .filter(|l| l.starts_with("#[warn("))
        .collect();
    assert_eq!(clippy_lints(listed), clippy_lints(&pinned.join("\n")));
    assert!(!clippy_lints(listed).is_empty());
}

/// A `static` breaker and a `LazyLock` budget: the call retries through
/// them; the split `Body::buffer` reads, then lends, the body.
#[test]
fn static_controls_and_a_split_borrow() {
    use backoff_shapes::controls::{Body, guarded};
    let mut failures = 2;
    assert_eq!(guarded(&mut failures, 7), Ok(7));
    assert_eq!(failures, 0);
    let mut body = Body::Reader(b"abc".to_vec());
    assert_eq!(body.buffer(), Ok(&b"abc"[..]));
}
