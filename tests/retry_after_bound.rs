//! The default bound on a server's word: a `Decision::RetryAfter` longer than
//! `retry_after_max` (five minutes unless set) gives up at once with the
//! error, reason `Deadline`, never sleeping, on every path that can follow
//! one: the attribute on a plain fn (an injected sleep) and on an `async fn`
//! (tokio's own sleep), a `policy = ..` built with the setter, a hand-driven
//! `RetryState`, `throttled(..)`, and together with `max_elapsed`.
//!
//! Async tests run on tokio's paused clock, so "no wait beyond the bound" is
//! asserted as the virtual time a call took, exactly; plain fns record their
//! sleeps. `Policy::retry` and `retry_async` retry every error with the
//! policy's backoff (they take no `when`), so no `RetryAfter` reaches them;
//! a `Policy` carries its bound into `#[retry(policy = ..)]` and
//! `RetryState`, tested here.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use backoff_runtime::{Decision, GiveUp, GiveUpReason, Jitter, Policy, clock, retry};
use tokio::time::Instant;

const SECS: fn(u64) -> Duration = Duration::from_secs;
const MIN: Duration = Duration::from_secs(60);
/// The default `retry_after_max`: five minutes.
const BOUND: Duration = Duration::from_secs(5 * 60);
const NS: Duration = Duration::from_nanos(1);

thread_local! {
    static CALLS: Cell<usize> = const { Cell::new(0) };
    static SLEPT: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
    static GAVE_UP: Cell<Option<GiveUp>> = const { Cell::new(None) };
}

/// What a server says on each attempt: the last entry repeats.
#[derive(Debug, Clone, Copy)]
enum Says {
    /// 503 with `Retry-After` this long.
    WaitFor(Duration),
    /// 429 without a hint.
    Throttled,
}

/// One attempt against the script: always fails, with what the server says.
fn attempt(script: &[Says]) -> Says {
    let n = CALLS.get();
    CALLS.set(n + 1);
    assert!(n < 100, "runaway retry loop");
    script[n.min(script.len() - 1)]
}

fn follow(e: &Says) -> Decision {
    match *e {
        Says::WaitFor(d) => Decision::RetryAfter(d),
        Says::Throttled => Decision::Throttled,
    }
}

fn record(d: Duration) {
    SLEPT.with_borrow_mut(|s| s.push(d));
}

fn note_giveup<T>(_: &Result<T, Says>, g: &GiveUp) {
    GAVE_UP.set(Some(*g));
}

/// What a call did: attempts made, sleeps recorded, the give-up report.
#[derive(Debug, PartialEq)]
struct Seen {
    calls: usize,
    slept: Vec<Duration>,
    reason: Option<GiveUpReason>,
}

fn fresh() {
    CALLS.set(0);
    SLEPT.take();
    GAVE_UP.set(None);
}

fn seen() -> Seen {
    Seen {
        calls: CALLS.get(),
        slept: SLEPT.take(),
        reason: GAVE_UP.get().map(|g| g.reason),
    }
}

/// Runs an async call on the paused clock: what it did, and the virtual
/// time it took.
async fn timed<T>(call: impl Future<Output = T>) -> (T, Duration) {
    fresh();
    let started = Instant::now();
    let out = call.await;
    (out, started.elapsed())
}

fn wait(d: Duration) -> Says {
    Says::WaitFor(d)
}

// ---------------------------------------------------------------------------
// The attribute, plain fn: an injected sleep records the waits
// ---------------------------------------------------------------------------

#[retry(immediate, attempts = 4, when = follow, on_giveup = note_giveup, sleep = record)]
fn sync_call(script: &[Says]) -> Result<(), Says> {
    Err(attempt(script))
}

#[test]
fn plain_fn_waits_up_to_five_minutes_by_default() {
    fresh();
    assert!(sync_call(&[wait(BOUND)]).is_err());
    assert_eq!(
        seen(),
        Seen {
            calls: 4,
            slept: vec![BOUND; 3],
            reason: Some(GiveUpReason::Attempts)
        }
    );
}

#[test]
fn plain_fn_gives_up_at_once_past_five_minutes() {
    for too_long in [
        BOUND + NS,
        BOUND + SECS(1),
        SECS(999_999_999),
        SECS(u64::MAX),
        Duration::MAX,
    ] {
        fresh();
        assert!(matches!(sync_call(&[wait(too_long)]), Err(Says::WaitFor(d)) if d == too_long));
        assert_eq!(
            seen(),
            Seen {
                calls: 1,
                slept: vec![],
                reason: Some(GiveUpReason::Deadline)
            },
            "{too_long:?}"
        );
    }
}

#[test]
fn plain_fn_gives_up_on_the_first_hint_past_the_bound_after_following_shorter_ones() {
    fresh();
    let _ = sync_call(&[
        wait(SECS(1)),
        wait(BOUND),
        wait(BOUND + SECS(1)),
        wait(SECS(1)),
    ]);
    assert_eq!(
        seen(),
        Seen {
            calls: 3,
            slept: vec![SECS(1), BOUND],
            reason: Some(GiveUpReason::Deadline)
        }
    );
}

// ---------------------------------------------------------------------------
// The attribute, async fn: tokio's sleep on the paused clock
// ---------------------------------------------------------------------------

#[retry(immediate, attempts = 4, when = follow, on_giveup = note_giveup)]
async fn async_call(script: &[Says]) -> Result<(), Says> {
    Err(attempt(script))
}

#[tokio::test(start_paused = true)]
async fn async_fn_sleeps_exactly_up_to_five_minutes_by_default() {
    let (result, took) = timed(async_call(&[wait(BOUND)])).await;
    assert!(result.is_err());
    assert_eq!(took, BOUND * 3);
    assert_eq!(seen().reason, Some(GiveUpReason::Attempts));
}

#[tokio::test(start_paused = true)]
async fn async_fn_gives_up_at_once_past_five_minutes() {
    for too_long in [
        BOUND + NS,
        BOUND + Duration::from_millis(1),
        SECS(999_999_999),
        Duration::MAX,
    ] {
        let (result, took) = timed(async_call(&[wait(too_long)])).await;
        assert!(result.is_err());
        assert_eq!(took, Duration::ZERO, "{too_long:?}: slept");
        let seen = seen();
        assert_eq!(
            (seen.calls, seen.reason),
            (1, Some(GiveUpReason::Deadline)),
            "{too_long:?}"
        );
        assert_eq!(GAVE_UP.get().unwrap().elapsed, Duration::ZERO);
    }
}

#[tokio::test(start_paused = true)]
async fn async_fn_follows_short_hints_then_gives_up_without_sleeping_on_a_long_one() {
    let script = [
        wait(SECS(10)),
        wait(SECS(2099 * 365 * 86_400)),
        wait(SECS(1)),
    ];
    let (_, took) = timed(async_call(&script)).await;
    assert_eq!(took, SECS(10));
    let g = GAVE_UP.get().unwrap();
    assert_eq!(
        (g.attempts, g.elapsed, g.reason),
        (2, SECS(10), GiveUpReason::Deadline)
    );
}

#[retry(immediate, attempts = 3, retry_after_max = "1h", when = follow, on_giveup = note_giveup)]
async fn async_call_patient(script: &[Says]) -> Result<(), Says> {
    Err(attempt(script))
}

#[retry(immediate, attempts = 3, retry_after_max = "2s", when = follow, on_giveup = note_giveup)]
async fn async_call_impatient(script: &[Says]) -> Result<(), Says> {
    Err(attempt(script))
}

#[tokio::test(start_paused = true)]
async fn the_attribute_argument_moves_the_bound_both_ways() {
    let (_, took) = timed(async_call_patient(&[wait(SECS(3600))])).await;
    assert_eq!(took, SECS(7200));
    assert_eq!(seen().reason, Some(GiveUpReason::Attempts));
    let (_, took) = timed(async_call_patient(&[wait(SECS(3600) + NS)])).await;
    assert_eq!(
        (took, seen().reason),
        (Duration::ZERO, Some(GiveUpReason::Deadline))
    );

    let (_, took) = timed(async_call_impatient(&[wait(SECS(2))])).await;
    assert_eq!(took, SECS(4));
    let (_, took) = timed(async_call_impatient(&[wait(SECS(3))])).await;
    assert_eq!(
        (took, seen().reason),
        (Duration::ZERO, Some(GiveUpReason::Deadline))
    );
}

// ---------------------------------------------------------------------------
// `policy = ..`: a Policy built with the setter, or with the default bound
// ---------------------------------------------------------------------------

static DEFAULT_BOUND: Policy = Policy::immediate().attempts(3);
static MINUTE_BOUND: Policy = Policy::immediate().attempts(3).retry_after_max(MIN);

#[retry(policy = &DEFAULT_BOUND, when = follow, on_giveup = note_giveup, sleep = record)]
fn sync_with_default_policy(script: &[Says]) -> Result<(), Says> {
    Err(attempt(script))
}

#[retry(policy = &MINUTE_BOUND, when = follow, on_giveup = note_giveup)]
async fn async_with_minute_policy(script: &[Says]) -> Result<(), Says> {
    Err(attempt(script))
}

/// The bound comes from an argument: a per-call policy.
#[retry(policy = Policy::immediate().attempts(3).retry_after_max(bound), when = follow, on_giveup = note_giveup)]
async fn async_with_bound(bound: Duration, script: &[Says]) -> Result<(), Says> {
    Err(attempt(script))
}

#[test]
fn a_static_policy_keeps_the_default_bound() {
    assert_eq!(DEFAULT_BOUND.retry_after_limit(), BOUND);
    fresh();
    let _ = sync_with_default_policy(&[wait(BOUND)]);
    assert_eq!(seen().slept, [BOUND; 2]);
    fresh();
    let _ = sync_with_default_policy(&[wait(BOUND + NS)]);
    assert_eq!(
        seen(),
        Seen {
            calls: 1,
            slept: vec![],
            reason: Some(GiveUpReason::Deadline)
        }
    );
}

#[tokio::test(start_paused = true)]
async fn a_policy_set_with_the_setter_bounds_the_attribute() {
    let (_, took) = timed(async_with_minute_policy(&[wait(MIN)])).await;
    assert_eq!(
        (took, seen().reason),
        (MIN * 2, Some(GiveUpReason::Attempts))
    );
    let (_, took) = timed(async_with_minute_policy(&[wait(MIN + NS)])).await;
    assert_eq!(
        (took, seen().reason),
        (Duration::ZERO, Some(GiveUpReason::Deadline))
    );

    let (_, took) = timed(async_with_bound(SECS(5), &[wait(SECS(5))])).await;
    assert_eq!(took, SECS(10));
    let (_, took) = timed(async_with_bound(SECS(5), &[wait(SECS(6))])).await;
    assert_eq!(
        (took, seen().reason),
        (Duration::ZERO, Some(GiveUpReason::Deadline))
    );
}

// ---------------------------------------------------------------------------
// A hand-driven RetryState, on tokio's clock
// ---------------------------------------------------------------------------

/// The EventSauce loop: the caller sleeps what the state grants.
async fn drive(policy: &Policy, script: &[Says]) -> (Option<GiveUp>, Duration) {
    let started = Instant::now();
    let mut state = policy.start_with_clock(clock::tokio);
    for says in script {
        match state.next_delay_for(follow(says)) {
            Some(d) => tokio::time::sleep(d).await,
            None => break,
        }
    }
    (state.give_up(), started.elapsed())
}

#[tokio::test(start_paused = true)]
async fn a_hand_driven_state_gives_up_past_the_bound_without_sleeping() {
    let policy = Policy::immediate().unlimited_attempts();
    let (g, took) = drive(&policy, &[wait(SECS(30)), wait(BOUND), wait(BOUND + NS)]).await;
    let g = g.expect("gave up");
    assert_eq!((g.attempts, g.reason), (3, GiveUpReason::Deadline));
    assert_eq!(took, SECS(30) + BOUND);
    assert_eq!(g.elapsed, took, "the report's elapsed time is tokio's");

    let (g, took) = drive(&policy, &[wait(Duration::MAX)]).await;
    assert_eq!(
        (g.unwrap().reason, took),
        (GiveUpReason::Deadline, Duration::ZERO)
    );

    // The setter's bound, both ways; `Duration::MAX` follows any wait.
    let short = policy.retry_after_max(SECS(1));
    let (g, took) = drive(&short, &[wait(SECS(1)), wait(SECS(2))]).await;
    assert_eq!((g.unwrap().reason, took), (GiveUpReason::Deadline, SECS(1)));
    let long = policy.retry_after_max(Duration::MAX);
    let (g, took) = drive(&long, &[wait(BOUND * 100)]).await;
    assert_eq!((g, took), (None, BOUND * 100));
}

// ---------------------------------------------------------------------------
// throttled(..): a `when` that answers some throttled errors with RetryAfter
// ---------------------------------------------------------------------------

#[retry(
    exponential(base = "1s", max = "4s"),
    jitter = "none",
    attempts = 6,
    throttled(constant("30s"), attempts = 6),
    when = follow,
    on_giveup = note_giveup
)]
async fn throttled_call(script: &[Says]) -> Result<(), Says> {
    Err(attempt(script))
}

#[tokio::test(start_paused = true)]
async fn throttled_schedules_keep_the_bound_on_retry_after() {
    // A 429 without a hint waits the throttled 30 s; with one, the hint,
    // up to the bound.
    let script = [
        Says::Throttled,
        wait(BOUND),
        Says::Throttled,
        wait(BOUND + SECS(1)),
    ];
    let (_, took) = timed(throttled_call(&script)).await;
    assert_eq!(took, SECS(30) + BOUND + SECS(30));
    let g = GAVE_UP.get().unwrap();
    assert_eq!((g.attempts, g.reason), (4, GiveUpReason::Deadline));

    let (_, took) = timed(throttled_call(&[wait(SECS(3600))])).await;
    assert_eq!(
        (took, seen().reason),
        (Duration::ZERO, Some(GiveUpReason::Deadline))
    );
}

// ---------------------------------------------------------------------------
// Together with max_elapsed: whichever is tighter refuses
// ---------------------------------------------------------------------------

#[retry(immediate, attempts = unlimited, max_elapsed = "10m", when = follow, on_giveup = note_giveup)]
async fn ten_minute_deadline(script: &[Says]) -> Result<(), Says> {
    Err(attempt(script))
}

#[retry(immediate, attempts = unlimited, max_elapsed = "1m", when = follow, on_giveup = note_giveup)]
async fn one_minute_deadline(script: &[Says]) -> Result<(), Says> {
    Err(attempt(script))
}

#[retry(
    immediate,
    attempts = unlimited,
    max_elapsed = "10m",
    retry_after_max = "1h",
    when = follow,
    on_giveup = note_giveup
)]
async fn ten_minute_deadline_hour_bound(script: &[Says]) -> Result<(), Says> {
    Err(attempt(script))
}

#[tokio::test(start_paused = true)]
async fn the_bound_refuses_what_a_looser_deadline_would_allow() {
    // 6 min fits in the 10 min deadline, but not in the 5 min bound.
    let (_, took) = timed(ten_minute_deadline(&[wait(6 * MIN)])).await;
    assert_eq!((took, seen().calls), (Duration::ZERO, 1));
    assert_eq!(GAVE_UP.get().unwrap().reason, GiveUpReason::Deadline);
    // Within both, until the deadline: 4 + 4 min, and a third would end at 12.
    let (_, took) = timed(ten_minute_deadline(&[wait(4 * MIN)])).await;
    assert_eq!((took, seen().calls), (8 * MIN, 3));
    assert_eq!(GAVE_UP.get().unwrap().reason, GiveUpReason::Deadline);
}

#[tokio::test(start_paused = true)]
async fn a_tighter_deadline_refuses_what_the_bound_would_allow() {
    let (_, took) = timed(one_minute_deadline(&[wait(2 * MIN)])).await;
    assert_eq!((took, seen().calls), (Duration::ZERO, 1));
    assert_eq!(GAVE_UP.get().unwrap().reason, GiveUpReason::Deadline);
    let (_, took) = timed(one_minute_deadline(&[wait(SECS(30))])).await;
    assert_eq!((took, seen().calls), (MIN, 3));
}

#[tokio::test(start_paused = true)]
async fn a_raised_bound_is_still_held_by_the_deadline() {
    let (_, took) = timed(ten_minute_deadline_hour_bound(&[wait(20 * MIN)])).await;
    assert_eq!((took, seen().calls), (Duration::ZERO, 1));
    let (_, took) = timed(ten_minute_deadline_hour_bound(&[wait(6 * MIN)])).await;
    assert_eq!((took, seen().calls), (6 * MIN, 2));
    assert_eq!(GAVE_UP.get().unwrap().reason, GiveUpReason::Deadline);
}

#[test]
fn the_default_is_five_minutes() {
    assert_eq!(BOUND, SECS(300));
    assert_eq!(Policy::default().retry_after_limit(), BOUND);
    let p = Policy::exponential(SECS(1))
        .jitter(Jitter::None)
        .max_elapsed(SECS(3600));
    assert_eq!(p.retry_after_limit(), BOUND, "max_elapsed leaves it alone");
}
