//! `backoff_runtime::Error<E>` with other crates' error types, in the
//! shapes a user writes: `?` on the foreign error inside a `#[retry]` body
//! that uses `circuit`, `timeout` and `attempt_timeout`, with no error enum of
//! the user's own. Each function here compiling is the first half of the
//! test; the second is what the refusals become.
//!
//! The foreign types are real: `std::io::Error`, `tonic::Status`, and
//! `Box<dyn Error + Send + Sync>` (tower's `BoxError`). Async tests run on
//! tokio's paused clock: the bodies sleep on timers only, so timeouts expire
//! at exact virtual times.

use std::error::Error as _;
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::{CircuitBreaker, CircuitOpen, Decision, Elapsed, Error, grpc, retry};
use backoff_workspace_tests::block_on_paused;
use tokio::time::{Instant, sleep};
use tonic::{Code, Status};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const SECS: fn(u64) -> Duration = Duration::from_secs;

// ---------------------------------------------------------------------------
// tonic::Status
// ---------------------------------------------------------------------------

/// A remote call: fails with `code` while `CALLS` is below `failures`.
async fn remote(calls: &AtomicU32, failures: u32, code: Code) -> Result<u32, Status> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if n <= failures {
        return Err(Status::new(code, format!("call {n}")));
    }
    Ok(n)
}

static STATUS_BREAKER: CircuitBreaker = CircuitBreaker::new(3, 1, Duration::from_secs(60));
static STATUS_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(
    immediate,
    attempts = 2,
    circuit = STATUS_BREAKER,
    timeout = "5s",
    when = |e| e.decision(grpc::decision)
)]
async fn status_call(failures: u32, code: Code) -> Result<u32, Error<Status>> {
    let n = remote(&STATUS_CALLS, failures, code).await?;
    Ok(n)
}

#[test]
fn status_question_mark_then_circuit_open() {
    block_on_paused(async {
        // UNAVAILABLE twice: both attempts fail, the inner status comes back.
        let e = status_call(2, Code::Unavailable).await.unwrap_err();
        let Error::Inner(status) = &e else {
            panic!("{e:?}")
        };
        assert_eq!(status.code(), Code::Unavailable);
        assert_eq!(status.message(), "call 2");
        assert_eq!(e.to_string(), status.to_string(), "Display is the status's");
        assert_eq!(STATUS_CALLS.load(Ordering::SeqCst), 2);

        // The third consecutive failure opens the breaker: the call's second
        // attempt is not made, and the call returns its last error.
        let e = status_call(u32::MAX, Code::Unavailable).await.unwrap_err();
        assert!(
            matches!(&e, Error::Inner(s) if s.code() == Code::Unavailable),
            "{e:?}"
        );
        assert_eq!(STATUS_CALLS.load(Ordering::SeqCst), 3);

        // Refused without running the body.
        let e = status_call(0, Code::Ok).await.unwrap_err();
        assert!(matches!(e, Error::CircuitOpen(_)), "{e:?}");
        assert_eq!(e.to_string(), CircuitOpen::default().to_string());
        assert!(e.source().is_none());
        assert_eq!(STATUS_CALLS.load(Ordering::SeqCst), 3);
        let status: Status = e.into();
        assert_eq!(status.code(), Code::Unavailable);
    });
}

#[retry(immediate, attempts = 3, timeout = "1s", when = |e| e.decision(grpc::decision))]
async fn slow_status_call() -> Result<u32, Error<Status>> {
    sleep(SECS(10)).await;
    Ok(remote(&AtomicU32::new(0), 0, Code::Ok).await?)
}

#[test]
fn status_elapsed() {
    block_on_paused(async {
        let started = Instant::now();
        let e = slow_status_call().await.unwrap_err();
        assert_eq!(started.elapsed(), SECS(1), "the timeout, exactly");
        assert!(matches!(e, Error::Elapsed), "{e:?}");
        assert_eq!(e.to_string(), Elapsed.to_string());
        assert_eq!(
            Status::from(e).code(),
            Code::DeadlineExceeded,
            "a handler's answer"
        );
    });
}

// ---------------------------------------------------------------------------
// std::io::Error: `attempt_timeout` retries through `Error::decision`
// ---------------------------------------------------------------------------

static IO_CALLS: AtomicU32 = AtomicU32::new(0);

fn transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::TimedOut
    )
}

/// The first attempt hangs and is cut short; the second is reset; the third
/// answers.
#[retry(
    constant("100ms"),
    jitter = "none",
    attempts = 4,
    attempt_timeout = "2s",
    when = |e| e.decision(transient)
)]
async fn io_call() -> Result<String, Error<io::Error>> {
    match IO_CALLS.fetch_add(1, Ordering::SeqCst) {
        0 => sleep(SECS(60)).await,
        1 => Err(io::Error::from(io::ErrorKind::ConnectionReset))?,
        _ => {}
    }
    let text = std::str::from_utf8(b"answer").map_err(io::Error::other)?;
    Ok(text.to_owned())
}

#[test]
fn io_attempt_timeout_is_retried() {
    block_on_paused(async {
        let started = Instant::now();
        assert_eq!(io_call().await.unwrap(), "answer");
        assert_eq!(IO_CALLS.load(Ordering::SeqCst), 3);
        // 2 s cut short, 100 ms, the reset, 100 ms, the answer.
        assert_eq!(started.elapsed(), Duration::from_millis(2200));
    });
}

#[test]
fn io_source_is_the_inner_errors() {
    let cause = io::Error::other("disk on fire");
    let e: Error<io::Error> = io::Error::other(Wrapped(cause)).into();
    assert_eq!(e.to_string(), "wrapped");
    assert_eq!(e.source().unwrap().to_string(), "disk on fire");
    assert_eq!(
        Error::Inner(io::Error::other("flat")).decision(transient),
        Decision::Stop
    );

    #[derive(Debug)]
    struct Wrapped(io::Error);
    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("wrapped")
        }
    }
    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }
}

// ---------------------------------------------------------------------------
// Box<dyn Error + Send + Sync>, and a plain fn
// ---------------------------------------------------------------------------

static BOX_BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(60));

fn parse(text: &str) -> Result<u32, BoxError> {
    Ok(text.parse::<u32>()?)
}

#[retry(immediate, attempts = 2, circuit = BOX_BREAKER)]
fn boxed_call(text: &str) -> Result<u32, Error<BoxError>> {
    let n = parse(text)?;
    Ok(n)
}

#[test]
fn boxed_errors_in_a_plain_fn() {
    assert_eq!(boxed_call("7").unwrap(), 7);
    let e = boxed_call("x").unwrap_err();
    assert!(
        matches!(&e, Error::Inner(b) if b.is::<std::num::ParseIntError>()),
        "{e:?}"
    );
    assert!(matches!(boxed_call("7"), Err(Error::CircuitOpen(_))));
    // Displayed like any other (it is not a `std::error::Error` itself, as
    // the box is not).
    assert_eq!(
        Error::<BoxError>::CircuitOpen(CircuitOpen::default()).to_string(),
        "circuit breaker is open"
    );
}

/// `?` across functions that all return `Error<E>`.
#[test]
fn question_mark_on_error_itself() {
    fn inner() -> Result<(), Error<io::Error>> {
        Err(Elapsed)?
    }
    fn outer() -> Result<(), Error<io::Error>> {
        inner()?;
        Ok(())
    }
    assert!(matches!(outer(), Err(Error::Elapsed)));
}
