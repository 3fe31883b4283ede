//! `#[retry(when = backoff_runtime::grpc::decision)]` against a real gRPC
//! server: a tonic server on 127.0.0.1 (an ephemeral port, HTTP/2, no TLS)
//! answers a script of statuses, with or without `grpc-retry-pushback-ms`,
//! then OK; a tonic client is called from a `&mut self` method, as generated
//! clients are.
//!
//! The service is written by hand, as `tonic-prost-build` would write it,
//! but with a UTF-8 string codec instead of protobuf: the statuses and the
//! metadata travel exactly as they would (trailers of an HTTP/2 response),
//! and the build needs no `protoc`.
//!
//! The server runs on a thread of its own with a real clock. Each client runs
//! on a current-thread runtime whose clock is paused: it advances only when
//! the client waits on a timer with nothing else to do, and waiting on the
//! socket takes no virtual time, so the time a call took is exactly the
//! waits it made (a 1.5 s pushback is 1.5 s, to the nanosecond), and an hour
//! costs nothing. The client thread is bounded by [`LIMIT`] of real time.

use std::cell::RefCell;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::task::{Context, Poll};
use std::time::Duration;

use backoff_runtime::{CircuitBreaker, Error, GiveUp, GiveUpReason, RetryEvent, grpc, retry};
use bytes::{Buf, BufMut};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::server::NamedService;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

/// gRPC's pushback metadata key (proposal A6).
const PUSHBACK: &str = "grpc-retry-pushback-ms";
const MS: fn(u64) -> Duration = Duration::from_millis;
const SECS: fn(u64) -> Duration = Duration::from_secs;
const HOUR: Duration = Duration::from_secs(3600);

/// No test may take longer than this in real time, whatever goes wrong.
const LIMIT: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------
// The codec: one UTF-8 string per message
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Default)]
struct Utf8;

impl Codec for Utf8 {
    type Encode = String;
    type Decode = String;
    type Encoder = Utf8;
    type Decoder = Utf8;

    fn encoder(&mut self) -> Utf8 {
        Utf8
    }

    fn decoder(&mut self) -> Utf8 {
        Utf8
    }
}

impl Encoder for Utf8 {
    type Item = String;
    type Error = Status;

    fn encode(&mut self, item: String, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(item.as_bytes());
        Ok(())
    }
}

impl Decoder for Utf8 {
    type Item = String;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<String>, Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        String::from_utf8(bytes.to_vec())
            .map(Some)
            .map_err(|e| Status::internal(e.to_string()))
    }
}

// ---------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------

/// One scripted answer.
#[derive(Debug, Clone)]
enum Reply {
    /// OK with "hello, <name>".
    Ok,
    /// This code, no pushback.
    Fail(Code),
    /// This code with `grpc-retry-pushback-ms` set to each of these values.
    Pushback(Code, &'static [&'static str]),
    /// OK, after this long (the server's clock is real).
    Slow(Duration),
}

/// The server's state: the script and the requests seen.
#[derive(Debug)]
struct Script {
    replies: Vec<Reply>,
    /// The answer to every request past the script.
    then: Reply,
    hits: AtomicUsize,
}

impl Script {
    async fn answer(&self, name: String) -> Result<tonic::Response<String>, Status> {
        let n = self.hits.fetch_add(1, Ordering::SeqCst);
        let reply = self.replies.get(n).unwrap_or(&self.then).clone();
        match reply {
            Reply::Ok => Ok(tonic::Response::new(format!("hello, {name}"))),
            Reply::Slow(d) => {
                tokio::time::sleep(d).await;
                Ok(tonic::Response::new(format!("hello, {name}")))
            }
            Reply::Fail(code) => Err(Status::new(code, format!("scripted {code:?}"))),
            Reply::Pushback(code, values) => {
                let mut metadata = MetadataMap::new();
                for v in values {
                    metadata.append(PUSHBACK, MetadataValue::from_static(v));
                }
                Err(Status::with_metadata(code, "scripted", metadata))
            }
        }
    }
}

/// The service, as `tonic-prost-build` generates it for
/// `service Greeter { rpc SayHello (String) returns (String); }`, minus the
/// routing by method (there is one).
#[derive(Debug, Clone)]
struct GreeterServer(Arc<Script>);

impl NamedService for GreeterServer {
    const NAME: &'static str = "test.Greeter";
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl tower::Service<http::Request<tonic::body::Body>> for GreeterServer {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        let script = Arc::clone(&self.0);
        Box::pin(async move {
            let say_hello = tower::service_fn(move |r: tonic::Request<String>| {
                let script = Arc::clone(&script);
                async move { script.answer(r.into_inner()).await }
            });
            Ok(tonic::server::Grpc::new(Utf8)
                .unary(say_hello, request)
                .await)
        })
    }
}

/// A server on 127.0.0.1 answering `replies` in turn, then `then` forever,
/// on a thread and runtime of its own (a real clock); it stops when dropped.
struct Server {
    addr: SocketAddr,
    script: Arc<Script>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Server {
    fn start(replies: Vec<Reply>, then: Reply) -> Server {
        let script = Arc::new(Script {
            replies,
            then,
            hits: AtomicUsize::new(0),
        });
        let service = GreeterServer(Arc::clone(&script));
        let (addr_tx, addr_rx) = mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                tonic::transport::Server::builder()
                    .add_service(service)
                    .serve_with_incoming_shutdown(TcpIncoming::from(listener), async {
                        let _ = stopped.await;
                    })
                    .await
                    .unwrap();
            });
        });
        let addr = addr_rx.recv_timeout(LIMIT).expect("the server started");
        Server {
            addr,
            script,
            _stop: stop,
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

/// The client, as `tonic-prost-build` generates it: its methods take
/// `&mut self`.
#[derive(Debug, Clone)]
struct GreeterClient {
    inner: tonic::client::Grpc<Channel>,
}

impl GreeterClient {
    async fn connect(addr: SocketAddr) -> GreeterClient {
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .expect("connected to the test server");
        GreeterClient {
            inner: tonic::client::Grpc::new(channel),
        }
    }

    async fn say_hello(&mut self, name: String) -> Result<String, Status> {
        self.inner
            .ready()
            .await
            .map_err(|e| Status::unknown(format!("service was not ready: {e}")))?;
        let path = http::uri::PathAndQuery::from_static("/test.Greeter/SayHello");
        let response = self
            .inner
            .unary(tonic::Request::new(name), path, Utf8)
            .await?;
        Ok(response.into_inner())
    }
}

/// What a call did, besides its result.
#[derive(Debug, Default)]
struct Seen {
    /// The delays `on_retry` was told, in order.
    delays: Vec<Duration>,
    /// The give-up report, if the call gave up.
    gave_up: Option<GiveUp>,
}

thread_local! {
    /// What the hooks saw on this thread: each client runs on a thread of
    /// its own.
    static SEEN: RefCell<Seen> = RefCell::default();
}

fn retried<E>(_: &E, ev: &RetryEvent) {
    SEEN.with_borrow_mut(|s| s.delays.push(ev.delay));
}

fn gave_up<T, E>(_: &Result<T, E>, g: &GiveUp) {
    SEEN.with_borrow_mut(|s| s.gave_up = Some(*g));
}

/// A struct holding a generated client, whose `#[retry]` methods take
/// `&mut self`.
struct Greeter {
    client: GreeterClient,
}

impl Greeter {
    /// Up to 5 calls; 20 ms, 40 ms, 80 ms... between retries after
    /// UNAVAILABLE, 700 ms after RESOURCE_EXHAUSTED without a pushback; the
    /// default bound of five minutes on a pushback.
    #[retry(
        exponential(base = "20ms", max = "100ms"),
        throttled(constant("700ms"), attempts = 5),
        jitter = "none",
        attempts = 5,
        when = grpc::decision,
        on_retry = retried,
        on_giveup = gave_up
    )]
    async fn greet(&mut self, name: &str) -> Result<String, Status> {
        self.client.say_hello(name.to_owned()).await
    }

    /// As [`Greeter::greet`], trusting a pushback of up to two hours.
    #[retry(
        exponential(base = "20ms", max = "100ms"),
        jitter = "none",
        attempts = 5,
        retry_after_max = "2h",
        when = grpc::decision,
        on_retry = retried,
        on_giveup = gave_up
    )]
    async fn greet_patiently(&mut self, name: &str) -> Result<String, Status> {
        self.client.say_hello(name.to_owned()).await
    }
}

/// Runs a client on a fresh paused-clock runtime on a thread of its own,
/// within [`LIMIT`] of real time.
fn on_paused_clock<T, F>(make: impl FnOnce() -> F + Send + 'static) -> T
where
    T: Send + 'static,
    F: Future<Output = T>,
{
    on_client_thread(true, make)
}

/// Runs a client on a fresh runtime on a thread of its own, within
/// [`LIMIT`] of real time; its clock is paused or real.
///
/// A paused clock jumps to the next timer whenever the client waits on the
/// socket, so a test that needs a timer to run alongside a call in flight
/// (`timeout`) runs on the real clock.
fn on_client_thread<T, F>(paused: bool, make: impl FnOnce() -> F + Send + 'static) -> T
where
    T: Send + 'static,
    F: Future<Output = T>,
{
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(paused)
            .build()
            .unwrap();
        let _ = tx.send(runtime.block_on(make()));
    });
    match rx.recv_timeout(LIMIT) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the client took longer than {LIMIT:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => match thread.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the client sent nothing"),
        },
    }
}

/// One call of `greet` (or `greet_patiently`) on the paused clock: its
/// result, what the hooks saw, and the virtual time it took.
fn call(server: &Server, patient: bool) -> (Result<String, Status>, Seen, Duration) {
    let addr = server.addr;
    on_paused_clock(move || async move {
        let mut greeter = Greeter {
            client: GreeterClient::connect(addr).await,
        };
        let started = tokio::time::Instant::now();
        let result = if patient {
            greeter.greet_patiently("Ada").await
        } else {
            greeter.greet("Ada").await
        };
        (result, SEEN.take(), started.elapsed())
    })
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn unavailable_then_ok() {
    let server = Server::start(
        vec![
            Reply::Fail(Code::Unavailable),
            Reply::Fail(Code::Unavailable),
        ],
        Reply::Ok,
    );
    let (result, seen, took) = call(&server, false);
    assert_eq!(result.unwrap(), "hello, Ada");
    assert_eq!(server.hits(), 3);
    assert_eq!(seen.delays, [MS(20), MS(40)]);
    assert_eq!(took, MS(60), "exactly the backoff");
    assert!(seen.gave_up.is_none());
}

#[test]
fn resource_exhausted_waits_for_the_pushback_exactly() {
    let server = Server::start(
        vec![
            Reply::Pushback(Code::ResourceExhausted, &["1500"]),
            Reply::Pushback(Code::Unavailable, &["250"]),
            Reply::Pushback(Code::ResourceExhausted, &["0"]),
        ],
        Reply::Ok,
    );
    let (result, seen, took) = call(&server, false);
    assert_eq!(result.unwrap(), "hello, Ada");
    assert_eq!(server.hits(), 4);
    assert_eq!(seen.delays, [MS(1500), MS(250), MS(0)]);
    assert_eq!(took, MS(1750), "exactly the pushbacks, on the paused clock");
}

#[test]
fn resource_exhausted_without_pushback_is_throttled() {
    let server = Server::start(
        vec![
            Reply::Fail(Code::ResourceExhausted),
            Reply::Fail(Code::Unavailable),
            Reply::Fail(Code::ResourceExhausted),
        ],
        Reply::Ok,
    );
    let (result, seen, took) = call(&server, false);
    assert_eq!(result.unwrap(), "hello, Ada");
    assert_eq!(server.hits(), 4);
    // The throttled schedule, the main one in between.
    assert_eq!(seen.delays, [MS(700), MS(20), MS(700)]);
    assert_eq!(took, MS(1420));
}

#[test]
fn an_hour_of_pushback_is_bounded_by_retry_after_max() {
    for code in [Code::Unavailable, Code::ResourceExhausted] {
        let server = Server::start(vec![], Reply::Pushback(code, &["3600000"]));
        let (result, seen, took) = call(&server, false);
        let status = result.unwrap_err();
        assert_eq!(status.code(), code);
        assert_eq!(
            status.metadata().get(PUSHBACK).unwrap(),
            "3600000",
            "the server's status, unchanged"
        );
        assert_eq!(server.hits(), 1, "{code:?}");
        assert_eq!(seen.delays, [], "{code:?}: no sleep at all");
        assert_eq!(took, Duration::ZERO, "{code:?}");
        let gave_up = seen.gave_up.unwrap();
        assert_eq!(gave_up.reason, GiveUpReason::Deadline, "{code:?}");
        assert_eq!(gave_up.attempts, 1);
    }
}

#[test]
fn an_hour_of_pushback_is_waited_when_the_bound_allows_it() {
    let server = Server::start(
        vec![Reply::Pushback(Code::Unavailable, &["3600000"])],
        Reply::Ok,
    );
    let (result, seen, took) = call(&server, true);
    assert_eq!(result.unwrap(), "hello, Ada");
    assert_eq!(server.hits(), 2);
    assert_eq!(seen.delays, [HOUR]);
    assert_eq!(took, HOUR, "an hour of virtual time");
}

#[test]
fn invalid_argument_stops_after_one_call() {
    for reply in [
        Reply::Fail(Code::InvalidArgument),
        // A pushback does not make it retryable.
        Reply::Pushback(Code::InvalidArgument, &["10"]),
        Reply::Fail(Code::NotFound),
        Reply::Fail(Code::DeadlineExceeded),
        Reply::Fail(Code::Internal),
    ] {
        let server = Server::start(vec![], reply.clone());
        let (result, seen, took) = call(&server, false);
        let status = result.unwrap_err();
        assert!(status.message().starts_with("scripted"), "{status:?}");
        assert_eq!(server.hits(), 1, "{reply:?}");
        assert_eq!(seen.delays, [], "{reply:?}");
        assert_eq!(took, Duration::ZERO, "{reply:?}");
        assert_eq!(seen.gave_up.unwrap().reason, GiveUpReason::Stopped);
    }
}

#[test]
fn a_negative_or_unparsable_pushback_stops() {
    for values in [
        &["-1"][..],
        &["-250"],
        &["soon"],
        &["1.5"],
        &["1s"],
        &[""],
        &["5", "5"],
    ] {
        for code in [Code::Unavailable, Code::ResourceExhausted] {
            let server = Server::start(vec![], Reply::Pushback(code, values));
            let (result, seen, took) = call(&server, false);
            assert_eq!(result.unwrap_err().code(), code);
            assert_eq!(server.hits(), 1, "{code:?} {values:?}");
            assert_eq!(seen.delays, [], "{code:?} {values:?}");
            assert_eq!(took, Duration::ZERO);
            assert_eq!(seen.gave_up.unwrap().reason, GiveUpReason::Stopped);
        }
    }
}

#[test]
fn attempts_bound_the_calls_even_with_pushbacks() {
    let server = Server::start(vec![], Reply::Pushback(Code::Unavailable, &["10"]));
    let (result, seen, took) = call(&server, false);
    assert_eq!(result.unwrap_err().code(), Code::Unavailable);
    assert_eq!(server.hits(), 5);
    assert_eq!(seen.delays, [MS(10); 4]);
    assert_eq!(took, MS(40));
    assert_eq!(seen.gave_up.unwrap().reason, GiveUpReason::Attempts);
}

// ---------------------------------------------------------------------------
// `Error<Status>`: `circuit` and `timeout` with tonic's own error type
// ---------------------------------------------------------------------------

static BREAKER: CircuitBreaker = CircuitBreaker::new(2, 1, Duration::from_secs(30));

/// A client method under a breaker and a timeout: `?` wraps the `Status`.
struct Guarded {
    client: GreeterClient,
}

impl Guarded {
    #[retry(
        immediate,
        attempts = 2,
        circuit = BREAKER,
        timeout = "1s",
        when = |e| e.decision(grpc::decision)
    )]
    async fn greet(&mut self, name: &str) -> Result<String, Error<Status>> {
        let greeting = self.client.say_hello(name.to_owned()).await?;
        Ok(greeting)
    }
}

#[test]
fn error_of_status_with_a_breaker_and_a_timeout() {
    // Two calls fail: the breaker (two consecutive failures) opens.
    let failing = Server::start(vec![], Reply::Fail(Code::Unavailable));
    let addr = failing.addr;
    let (first, refused) = on_client_thread(false, move || async move {
        let mut guarded = Guarded {
            client: GreeterClient::connect(addr).await,
        };
        let first = guarded.greet("Ada").await;
        // The third call is refused without reaching the server.
        let refused = guarded.greet("Ada").await;
        (first, refused)
    });
    let Err(Error::Inner(status)) = first else {
        panic!("{first:?}")
    };
    assert_eq!(status.code(), Code::Unavailable);
    // The refusal says when the breaker tries again (its `open_for`).
    let Err(Error::CircuitOpen(open)) = refused else {
        panic!("{refused:?}")
    };
    assert!(open.retry_in().is_some_and(|d| !d.is_zero()), "{open:?}");
    assert_eq!(failing.hits(), 2);
    let refused = refused.unwrap_err();
    assert_eq!(refused.to_string(), "circuit breaker is open");
    assert_eq!(Status::from(refused).code(), Code::Unavailable);

    // A server slower than the timeout: `Error::Elapsed` after one second,
    // while the server is still sleeping.
    let slow = Server::start(vec![], Reply::Slow(SECS(30)));
    let addr = slow.addr;
    let (late, took) = on_client_thread(false, move || async move {
        #[retry(immediate, attempts = 3, timeout = "1s", when = |e| e.decision(grpc::decision))]
        async fn greet(client: &mut GreeterClient) -> Result<String, Error<Status>> {
            Ok(client.say_hello("Ada".to_owned()).await?)
        }
        let mut client = GreeterClient::connect(addr).await;
        let started = tokio::time::Instant::now();
        let late = greet(&mut client).await;
        (late, started.elapsed())
    });
    assert!(matches!(late, Err(Error::Elapsed)), "{late:?}");
    assert!(took >= SECS(1) && took < LIMIT, "{took:?}");
    assert_eq!(slow.hits(), 1);
    assert_eq!(late.unwrap_err().to_string(), "timed out");
}
