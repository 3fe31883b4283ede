//! Allocation tests of the code `#[retry]` generates: SPEC.md promises that
//! no path allocates ("Without `max_elapsed` and `on_retry`, the success path
//! reads no clock, draws no random number and allocates nothing. No path
//! allocates.").
//!
//! A counting global allocator wraps `System` and counts, per thread, every
//! allocation (`alloc`, `alloc_zeroed`, `realloc`), so tests running in
//! parallel do not see each other's. Each test counts only around the call
//! under test; bodies and errors are chosen not to allocate themselves.
//!
//! Async functions are driven by a tiny hand-rolled executor (a no-op waker
//! and a poll loop), with an injected async sleep, so only the generated code
//! runs; a separate test measures the default `tokio::time::sleep` on a
//! paused current-thread runtime.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use backoff_runtime::{Decision, GiveUp, Jitter, Policy, RetryEvent, retry};

// ---------------------------------------------------------------------------
// The counting allocator
// ---------------------------------------------------------------------------

struct Counting;

thread_local! {
    /// Allocations made by this thread. A `const`-initialized `Cell` of a
    /// type without `Drop`: reading it never allocates nor registers a
    /// destructor, so the allocator can use it.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: the thread may be tearing down its locals.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every method forwards to `System` with the caller's arguments,
// which upholds the `GlobalAlloc` contract; counting touches no memory the
// caller owns.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: forwarded as is; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: forwarded as is.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: forwarded as is; `ptr` came from this allocator, which is
        // `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is; `ptr` came from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns its result with the allocations this thread made
/// meanwhile.
fn allocations<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = ALLOCATIONS.get();
    let r = f();
    let after = ALLOCATIONS.get();
    (r, after - before)
}

#[test]
fn the_counter_sees_allocations() {
    let (v, n) = allocations(|| vec![1u8; 16].len());
    assert_eq!(v, 16);
    assert!(n >= 1, "a Vec allocation went uncounted");
}

// ---------------------------------------------------------------------------
// A tiny executor: poll with a no-op waker until ready. Futures that never
// wait on anything external complete; others would spin, so only pass
// futures whose sleeps are injected no-ops.
// ---------------------------------------------------------------------------

fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

// ---------------------------------------------------------------------------
// The functions under test
// ---------------------------------------------------------------------------

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
    static SLEPT: Cell<u32> = const { Cell::new(0) };
    static HOOKED: Cell<u32> = const { Cell::new(0) };
}

fn next_call() -> u32 {
    let n = CALLS.get() + 1;
    // A runaway loop is a bug: fail rather than hang.
    assert!(n <= 1000, "runaway retry loop");
    CALLS.set(n);
    n
}

fn fresh() {
    CALLS.set(0);
    SLEPT.set(0);
    HOOKED.set(0);
}

/// The injected blocking sleep: counts, does not sleep.
fn noop(_: Duration) {
    SLEPT.set(SLEPT.get() + 1);
}

/// The injected async sleep: counts, ready at once.
async fn noop_async(_: Duration) {
    SLEPT.set(SLEPT.get() + 1);
}

fn is_transient(e: &u32) -> bool {
    *e < 100
}

fn hook(_: &u32, ev: &RetryEvent) {
    assert!(ev.attempt >= 1);
    HOOKED.set(HOOKED.get() + 1);
}

/// Every default; succeeds at once.
#[retry]
fn defaults_ok() -> Result<u32, u32> {
    Ok(next_call())
}

/// Every default but the sleep; fails twice, then succeeds.
#[retry(sleep = noop)]
fn defaults_flaky() -> Result<u32, u32> {
    let n = next_call();
    if n < 3 { Err(n) } else { Ok(n) }
}

/// Every default but the sleep; always fails.
#[retry(sleep = noop)]
fn defaults_fail() -> Result<u32, u32> {
    Err(next_call())
}

#[retry(jitter = "full", when = is_transient, sleep = noop, attempts = 6)]
fn full_jitter_when() -> Result<u32, u32> {
    let n = next_call();
    if n < 5 { Err(n) } else { Ok(n) }
}

#[retry(decorrelated(base = "1ms", max = "1s"), attempts = 8, sleep = noop)]
fn decorrelated_fail() -> Result<(), u32> {
    Err(next_call())
}

#[retry(exponential(base = "1ms", max = "1h"), jitter = scattered(0.5), attempts = unlimited, max_elapsed = "1h", on_retry = hook, when = |e| if *e < 5 { Decision::RetryAfter(Duration::from_millis(1)) } else if *e < 10 { Decision::Retry } else { Decision::Stop }, sleep = noop)]
fn timed_hooked_fail() -> Result<(), u32> {
    Err(next_call())
}

static POLICY: Policy = Policy::fibonacci(Duration::from_millis(1))
    .jitter(Jitter::Equal)
    .attempts(5);

#[retry(policy = &POLICY, sleep = noop)]
fn with_policy() -> Result<(), u32> {
    Err(next_call())
}

#[retry(immediate, attempts = 4, context = ctx, when_ok = |v: &u32| *v == 0, on_giveup = |_: &Result<u32, u32>, g: &GiveUp| GAVE_UP.set(g.attempts))]
fn outcome_hooks(fail: bool) -> Result<u32, u32> {
    let n = next_call();
    if fail {
        return if ctx.last { Ok(0) } else { Err(ctx.attempt) };
    }
    Ok(n)
}

thread_local! {
    static GAVE_UP: Cell<u32> = const { Cell::new(0) };
}

#[retry]
async fn defaults_ok_async() -> Result<u32, u32> {
    Ok(next_call())
}

#[retry(sleep = noop_async)]
async fn defaults_flaky_async() -> Result<u32, u32> {
    let n = next_call();
    if n < 3 { Err(n) } else { Ok(n) }
}

#[retry(jitter = "full", when = is_transient, sleep = noop_async, attempts = 6)]
async fn full_jitter_when_async() -> Result<u32, u32> {
    let n = next_call();
    if n < 5 { Err(n) } else { Ok(n) }
}

#[retry(linear(base = "1ms"), attempts = 5, max_elapsed = "1h", on_retry = hook, sleep = noop_async)]
async fn timed_hooked_async() -> Result<(), u32> {
    Err(next_call())
}

#[retry(constant("1s"), jitter = "none", attempts = 4)]
async fn tokio_sleeps() -> Result<(), u32> {
    Err(next_call())
}

// ---------------------------------------------------------------------------
// Sync
// ---------------------------------------------------------------------------

#[test]
fn success_path_with_every_default_allocates_nothing() {
    fresh();
    let (r, n) = allocations(defaults_ok);
    assert_eq!(r, Ok(1));
    assert_eq!(n, 0, "allocations on the success path");
}

#[test]
fn retry_path_with_every_default_allocates_nothing() {
    fresh();
    // The first jittered delay of the process seeds the jitter from the OS:
    // counted too, since this may be the first.
    let (r, n) = allocations(defaults_flaky);
    assert_eq!(r, Ok(3));
    assert_eq!(SLEPT.get(), 2);
    assert_eq!(n, 0, "allocations on the retry path");
    fresh();
    let (r, n) = allocations(defaults_fail);
    assert_eq!(r, Err(3));
    assert_eq!(n, 0, "allocations when giving up");
}

#[test]
fn full_jitter_with_a_when_path_allocates_nothing() {
    fresh();
    let (r, n) = allocations(full_jitter_when);
    assert_eq!(r, Ok(5));
    assert_eq!(SLEPT.get(), 4);
    assert_eq!(n, 0);
}

#[test]
fn decorrelated_allocates_nothing() {
    fresh();
    let (r, n) = allocations(decorrelated_fail);
    assert_eq!(r, Err(8));
    assert_eq!(n, 0);
}

#[test]
fn deadline_on_retry_and_decisions_allocate_nothing() {
    fresh();
    let (r, n) = allocations(timed_hooked_fail);
    assert_eq!(r, Err(10));
    assert_eq!(HOOKED.get(), 9);
    assert_eq!(SLEPT.get(), 9);
    assert_eq!(n, 0);
}

#[test]
fn policy_expression_allocates_nothing() {
    fresh();
    let (r, n) = allocations(with_policy);
    assert_eq!(r, Err(5));
    assert_eq!(n, 0);
}

#[test]
fn context_when_ok_and_on_giveup_allocate_nothing() {
    fresh();
    let (r, n) = allocations(|| outcome_hooks(false));
    assert_eq!(r, Ok(1));
    assert_eq!(n, 0, "allocations on the success path");
    fresh();
    GAVE_UP.set(0);
    let (r, n) = allocations(|| outcome_hooks(true));
    assert_eq!(
        r,
        Ok(0),
        "the last Ok, rejected by when_ok, returned unchanged"
    );
    assert_eq!(GAVE_UP.get(), 4);
    assert_eq!(n, 0, "allocations when retrying and giving up");
}

#[test]
fn many_calls_allocate_nothing() {
    let ((), n) = allocations(|| {
        for _ in 0..1000 {
            fresh();
            assert_eq!(defaults_flaky(), Ok(3));
            fresh();
            assert_eq!(full_jitter_when(), Ok(5));
        }
    });
    assert_eq!(n, 0);
}

// ---------------------------------------------------------------------------
// Async, on the hand-rolled executor
// ---------------------------------------------------------------------------

#[test]
fn the_executor_itself_allocates_nothing() {
    let (r, n) = allocations(|| block_on(async { 7 }));
    assert_eq!(r, 7);
    assert_eq!(n, 0);
}

#[test]
fn async_success_path_with_every_default_allocates_nothing() {
    fresh();
    let (r, n) = allocations(|| block_on(defaults_ok_async()));
    assert_eq!(r, Ok(1));
    assert_eq!(n, 0);
}

#[test]
fn async_retry_path_allocates_nothing() {
    fresh();
    let (r, n) = allocations(|| block_on(defaults_flaky_async()));
    assert_eq!(r, Ok(3));
    assert_eq!(SLEPT.get(), 2);
    assert_eq!(n, 0);
}

#[test]
fn async_full_jitter_with_a_when_path_allocates_nothing() {
    fresh();
    let (r, n) = allocations(|| block_on(full_jitter_when_async()));
    assert_eq!(r, Ok(5));
    assert_eq!(SLEPT.get(), 4);
    assert_eq!(n, 0);
}

#[test]
fn async_deadline_and_on_retry_allocate_nothing() {
    fresh();
    let (r, n) = allocations(|| block_on(timed_hooked_async()));
    assert_eq!(r, Err(5));
    assert_eq!(HOOKED.get(), 4);
    assert_eq!(n, 0);
}

// ---------------------------------------------------------------------------
// Async, with the default `tokio::time::sleep`
// ---------------------------------------------------------------------------

#[test]
fn async_retry_path_with_tokio_sleep_allocates_nothing() {
    let rt = backoff_workspace_tests::paused_runtime();
    // The first timer this runtime ever registers is the retry loop's own.
    fresh();
    let (r, first) = allocations(|| {
        rt.block_on(async {
            let start = tokio::time::Instant::now();
            let r = tokio_sleeps().await;
            (r, start.elapsed())
        })
    });
    assert_eq!(r, (Err(4), Duration::from_secs(3)));
    fresh();
    let (r, again) = allocations(|| rt.block_on(tokio_sleeps()));
    assert_eq!(r, Err(4));
    // Baseline: the runtime driving plain tokio sleeps, no retry loop.
    let ((), baseline) = allocations(|| {
        rt.block_on(async {
            for _ in 0..3 {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    });
    assert_eq!(
        (first, again, baseline),
        (0, 0, 0),
        "allocations: (first call, second call, plain tokio sleeps)"
    );
}

// ---------------------------------------------------------------------------
// Hedged calls (`backoff_runtime::hedge`): the attempts live in the call's
// own future, and the hedge timer is tokio's, so no path allocates
// ---------------------------------------------------------------------------

/// A hedged call whose first attempt is slow: the hedge starts after
/// 20 ms and wins; the slow one is dropped; with a budget and a breaker.
async fn hedged(first_ms: u64) -> Result<u32, u32> {
    use backoff_runtime::HedgeDelay;
    use backoff_runtime::{CircuitBreaker, RetryBudget};
    static POLICY: Policy = Policy::immediate().attempts(3);
    static BUDGET: RetryBudget = RetryBudget::new(100, 1.0);
    static BREAKER: CircuitBreaker = CircuitBreaker::new(100, 1, Duration::from_secs(1));
    POLICY
        .hedge_async::<3>(HedgeDelay::After(Duration::from_millis(20)))
        .budget(&BUDGET)
        .circuit(&BREAKER, |_| 0)
        .call(|| {
            let n = next_call();
            async move {
                let takes = if n == 1 { first_ms } else { 10 };
                tokio::time::sleep(Duration::from_millis(takes)).await;
                if n == 2 { Err(n) } else { Ok(n) }
            }
        })
        .await
}

#[test]
fn hedged_calls_allocate_nothing() {
    let rt = backoff_workspace_tests::paused_runtime();
    // (The first timers this runtime ever registers are the call's own.)
    // Attempt 1 takes a second; the hedge (2) fails at 30 ms and starts
    // attempt 3 at once, which wins at 40 ms.
    fresh();
    let ((r, took), n) = allocations(|| {
        rt.block_on(async {
            let start = tokio::time::Instant::now();
            let r = hedged(1000).await;
            (r, start.elapsed())
        })
    });
    assert_eq!((r, took), (Ok(3), Duration::from_millis(40)));
    assert_eq!(CALLS.get(), 3);
    // The first attempt wins before the delay: no hedge.
    fresh();
    let (r, fast) = allocations(|| rt.block_on(hedged(5)));
    assert_eq!(r, Ok(1));
    assert_eq!(CALLS.get(), 1);
    assert_eq!((n, fast), (0, 0), "allocations: (hedged, first wins)");
}
