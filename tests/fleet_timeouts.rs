//! A cancelled attempt is a failed attempt (issue #24, item 8): a dependency
//! that hangs must open the breaker, whichever loop cancels the attempt.
//!
//! Each test puts a breaker with a failure threshold of 3 in front of a
//! dependency that never answers, cancels every attempt after 1 s, and
//! checks on tokio's paused clock that exactly three calls reach the
//! dependency (each returning `Elapsed`), that the breaker is then open, and
//! that later calls fail fast without running. The loops covered: the
//! attribute's `timeout` and `attempt_timeout`, the `retrying(..)` builder's
//! `timeout`, a caller's own `tokio::time::timeout` around a `#[retry]`
//! call, and a half-open trial that hangs (it must reopen the breaker,
//! rather than leave every later caller to become a trial that hangs too).
//!
//! `Policy::retry_async` takes no breaker, and `backoff_runtime::tower`
//! leaves the breaker to its own layer: neither holds a permit to drop.

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use backoff_runtime::{CircuitBreaker, CircuitOpen, CircuitState, Elapsed, Policy, retry};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum E {
    TimedOut,
    Open,
}

impl From<Elapsed> for E {
    fn from(_: Elapsed) -> Self {
        E::TimedOut
    }
}

impl From<CircuitOpen> for E {
    fn from(_: CircuitOpen) -> Self {
        E::Open
    }
}

/// A dependency that never answers; counts the calls that reached it.
async fn hang(calls: &AtomicU32) -> Result<u32, E> {
    calls.fetch_add(1, SeqCst);
    std::future::pending().await
}

/// Makes ten calls with `call`; checks that the first three each ran the
/// dependency for 1 s and timed out, that the breaker then opened, and
/// that the other seven failed fast without running.
async fn ten_calls<F: AsyncFnMut() -> Result<u32, E>>(
    breaker: &CircuitBreaker,
    calls: &AtomicU32,
    mut call: F,
) {
    for n in 1..=10u32 {
        let start = Instant::now();
        let result = call().await;
        let took = start.elapsed();
        if n <= 3 {
            assert_eq!(result, Err(E::TimedOut), "call {n}");
            assert_eq!(took, Duration::from_secs(1), "call {n}");
        } else {
            assert_eq!(result, Err(E::Open), "call {n}");
            assert_eq!(took, Duration::ZERO, "call {n} fails fast");
        }
        let want = if n < 3 {
            CircuitState::Closed
        } else {
            CircuitState::Open
        };
        assert_eq!(breaker.state(), want, "after call {n}");
    }
    assert_eq!(calls.load(SeqCst), 3, "calls that reached the dependency");
}

#[tokio::test(start_paused = true)]
async fn the_attributes_timeout_trips_the_breaker() {
    static B: CircuitBreaker = CircuitBreaker::new(3, 1, Duration::from_secs(30));
    static CALLS: AtomicU32 = AtomicU32::new(0);
    #[retry(attempts = 1, timeout = "1s", circuit = B)]
    async fn call() -> Result<u32, E> {
        hang(&CALLS).await
    }
    ten_calls(&B, &CALLS, call).await;
}

#[tokio::test(start_paused = true)]
async fn the_attributes_attempt_timeout_trips_the_breaker() {
    static B: CircuitBreaker = CircuitBreaker::new(3, 1, Duration::from_secs(30));
    static CALLS: AtomicU32 = AtomicU32::new(0);
    #[retry(attempts = 1, attempt_timeout = "1s", circuit = B)]
    async fn call() -> Result<u32, E> {
        hang(&CALLS).await
    }
    ten_calls(&B, &CALLS, call).await;
}

#[tokio::test(start_paused = true)]
async fn the_builders_timeout_trips_the_breaker() {
    static B: CircuitBreaker = CircuitBreaker::new(3, 1, Duration::from_secs(30));
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let policy = Policy::immediate().attempts(1);
    ten_calls(&B, &CALLS, async || {
        policy
            .retrying_async(async || hang(&CALLS).await)
            .circuit(&B)
            .timeout(Duration::from_secs(1))
            .call_async()
            .await
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_callers_own_timeout_trips_the_breaker() {
    static B: CircuitBreaker = CircuitBreaker::new(3, 1, Duration::from_secs(30));
    static CALLS: AtomicU32 = AtomicU32::new(0);
    #[retry(attempts = 1, circuit = B)]
    async fn call() -> Result<u32, E> {
        hang(&CALLS).await
    }
    ten_calls(&B, &CALLS, async || {
        // The caller's cancellation counts as a failed attempt too.
        match tokio::time::timeout(Duration::from_secs(1), call()).await {
            Ok(result) => result,
            Err(_) => Err(E::TimedOut),
        }
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_hung_trial_reopens_the_breaker() {
    static B: CircuitBreaker = CircuitBreaker::new(3, 1, Duration::from_secs(30));
    static CALLS: AtomicU32 = AtomicU32::new(0);
    #[retry(attempts = 1, timeout = "1s", circuit = B)]
    async fn call() -> Result<u32, E> {
        hang(&CALLS).await
    }
    ten_calls(&B, &CALLS, call).await;
    // Opened at 3 s; at 33 s one caller is the trial, and it hangs too.
    tokio::time::sleep_until(Instant::now() + Duration::from_secs(30)).await;
    let start = Instant::now();
    assert_eq!(call().await, Err(E::TimedOut));
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    assert_eq!(CALLS.load(SeqCst), 4);
    // The timed-out trial reopened the breaker: the next callers fail fast
    // instead of each becoming a trial that hangs for the whole timeout.
    assert_eq!(B.state(), CircuitState::Open);
    for _ in 0..5 {
        let start = Instant::now();
        assert_eq!(call().await, Err(E::Open));
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
    assert_eq!(CALLS.load(SeqCst), 4);
    // Open for 30 s from the trial's timeout (at 34 s), not from before.
    tokio::time::sleep(Duration::from_millis(29_999)).await;
    assert_eq!(call().await, Err(E::Open));
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(call().await, Err(E::TimedOut), "the next trial");
    assert_eq!(CALLS.load(SeqCst), 5);
}

/// `circuit = ...` takes a rate breaker as it takes a count breaker; its
/// window slides on tokio's paused clock, and hung calls count as failures
/// in it.
#[tokio::test(start_paused = true)]
async fn a_rate_breaker_under_the_attribute() {
    // Open when half of at least 4 calls in the last 10 s failed.
    static B: CircuitBreaker =
        CircuitBreaker::rate(0.5, 4, Duration::from_secs(10), Duration::from_secs(30));
    static CALLS: AtomicU32 = AtomicU32::new(0);
    static HANG: AtomicU32 = AtomicU32::new(0);
    #[retry(attempts = 1, timeout = "1s", circuit = B)]
    async fn call() -> Result<u32, E> {
        if HANG.load(SeqCst) > 0 {
            HANG.fetch_sub(1, SeqCst);
            return hang(&CALLS).await;
        }
        Ok(CALLS.fetch_add(1, SeqCst) + 1)
    }
    // Two hung calls and a success: 3 calls, fewer than 4.
    HANG.store(2, SeqCst);
    assert_eq!(call().await, Err(E::TimedOut));
    assert_eq!(call().await, Err(E::TimedOut));
    assert!(call().await.is_ok());
    assert_eq!(B.state(), CircuitState::Closed);
    // 10 s later those calls have slid out of the window: two more hung
    // calls and a success make 2 failures in 3 calls, still too few.
    tokio::time::sleep(Duration::from_secs(10)).await;
    HANG.store(2, SeqCst);
    assert_eq!(call().await, Err(E::TimedOut));
    assert_eq!(call().await, Err(E::TimedOut));
    assert!(call().await.is_ok());
    assert_eq!(B.state(), CircuitState::Closed);
    // The fourth call in the window, a success, completes min_calls with
    // half of them failed: the breaker opens, and calls fail fast.
    assert!(call().await.is_ok());
    assert_eq!(B.state(), CircuitState::Open);
    let start = Instant::now();
    assert_eq!(call().await, Err(E::Open));
    assert_eq!(start.elapsed(), Duration::ZERO);
}
