//! The recording facade (`backoff_runtime::record`) with a recorder of the
//! test's own, which keeps every event: what each loop tells it, in order,
//! with the attempts' kinds, numbers, outcomes and their times on tokio's
//! paused clock, the calls' outcomes and reasons, the delays, and the
//! named breakers' and budgets' state. (`backoff-opentelemetry`'s own
//! `tests/metrics.rs` checks the same events as that crate turns them
//! into instruments.)
//!
//! The recorder is process-wide (this file is its own process) and the
//! tests run in parallel: each names its calls uniquely and reads only its
//! own events.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use backoff_runtime::record::{
    self, AttemptEnded, AttemptOutcome, CallEnded, CallId, CallOutcome, Recorder,
};
use backoff_runtime::{
    AttemptKind, CircuitBreaker, CircuitState, Error, Policy, RetryBudget, retry,
};

/// One event, as the recorder was told it (times as durations).
#[derive(Debug, Clone, PartialEq)]
enum Event {
    Attempt {
        kind: AttemptKind,
        number: u32,
        outcome: AttemptOutcome,
        took: Duration,
    },
    Call {
        outcome: CallOutcome,
        attempts: u32,
        took: Duration,
    },
    Delay(Duration),
    Breaker(CircuitState),
    Budget(f64),
}

/// Keeps every event, by the name it came with.
struct Keep(Mutex<Vec<(&'static str, Event)>>);

/// The call of each attempt and call end, by name.
static CALL_IDS: Mutex<Vec<(&'static str, CallId)>> = Mutex::new(Vec::new());

/// The calls of the events told under `name`, in order.
fn call_ids(name: &str) -> Vec<CallId> {
    let ids = CALL_IDS.lock().unwrap();
    ids.iter()
        .filter(|(n, _)| *n == name)
        .map(|(_, id)| *id)
        .collect()
}

impl Recorder for Keep {
    fn attempt_ended(&self, a: &AttemptEnded) {
        assert!(a.end >= a.start, "an attempt ends after it starts");
        assert!(
            a.call.start() <= a.start,
            "a call begins with its first attempt"
        );
        CALL_IDS.lock().unwrap().push((a.function, a.call));
        self.push(
            a.function,
            Event::Attempt {
                kind: a.kind,
                number: a.number,
                outcome: a.outcome,
                took: a.end.saturating_duration_since(a.start),
            },
        );
    }
    fn call_ended(&self, c: &CallEnded) {
        CALL_IDS.lock().unwrap().push((c.function, c.call));
        FAILURE_KINDS
            .lock()
            .unwrap()
            .push((c.function, c.failure_kind));
        self.push(
            c.function,
            Event::Call {
                outcome: c.outcome,
                attempts: c.attempts,
                took: c.duration,
            },
        );
    }
    fn retry_delay(&self, function: &'static str, delay: Duration) {
        self.push(function, Event::Delay(delay));
    }
    fn breaker_state(&self, breaker: &'static str, state: CircuitState) {
        self.push(breaker, Event::Breaker(state));
    }
    fn budget_tokens(&self, budget: &'static str, tokens: f64) {
        self.push(budget, Event::Budget(tokens));
    }
}

impl Keep {
    fn push(&self, name: &'static str, event: Event) {
        self.0.lock().unwrap().push((name, event));
    }
}

static KEEP: Keep = Keep(Mutex::new(Vec::new()));

/// Each call's end, as `(function, failure_kind)`.
static FAILURE_KINDS: Mutex<Vec<(&'static str, Option<&'static str>)>> = Mutex::new(Vec::new());

/// Installs the recorder, once.
fn setup() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| record::set_recorder(&KEEP).expect("the first recorder"));
}

/// The events told under `name` so far, in order.
fn events(name: &str) -> Vec<Event> {
    KEEP.0
        .lock()
        .unwrap()
        .iter()
        .filter(|(n, _)| *n == name)
        .map(|(_, e)| e.clone())
        .collect()
}

fn attempt(kind: AttemptKind, number: u32, outcome: AttemptOutcome, took: Duration) -> Event {
    Event::Attempt {
        kind,
        number,
        outcome,
        took,
    }
}

const MS: Duration = Duration::from_millis(1);

#[test]
fn a_second_recorder_is_refused() {
    setup();
    struct Other;
    impl Recorder for Other {}
    static OTHER: Other = Other;
    let error = record::set_recorder(&OTHER).expect_err("one recorder per process");
    assert_eq!(error.to_string(), "a recorder is already installed");
    assert!(std::ptr::addr_eq(record::recorder().unwrap(), &KEEP));
}

#[retry(constant("10ms"), jitter = "none", attempts = 4)]
async fn third_time(calls: &mut u32) -> Result<u32, &'static str> {
    *calls += 1;
    tokio::time::sleep(Duration::from_millis(3)).await;
    if *calls < 3 { Err("busy") } else { Ok(*calls) }
}

/// The attribute's compact `async fn` loop: each attempt with its own time
/// on the paused clock, each delay, the call's whole time.
#[tokio::test(start_paused = true)]
async fn the_compact_async_loop_tells_every_event() {
    setup();
    assert_eq!(third_time(&mut 0).await, Ok(3));
    let name = concat!(module_path!(), "::third_time");
    use AttemptKind::{Original, Retry};
    let failed = AttemptOutcome::Error;
    assert_eq!(
        events(name),
        [
            attempt(Original, 1, failed, 3 * MS),
            Event::Delay(10 * MS),
            attempt(Retry, 2, failed, 3 * MS),
            Event::Delay(10 * MS),
            attempt(Retry, 3, AttemptOutcome::Ok, 3 * MS),
            Event::Call {
                outcome: CallOutcome::Ok,
                attempts: 3,
                took: 29 * MS
            },
        ]
    );
}

#[retry(hedge = "20ms", attempts = 3)]
async fn third_wins(calls: &std::sync::atomic::AtomicU32) -> Result<u32, &'static str> {
    let n = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    // Attempts start at 0, 20 and 40 ms; the third answers first, at 50 ms.
    tokio::time::sleep(if n == 3 { 10 * MS } else { 1000 * MS }).await;
    Ok(n)
}

/// A hedged call's attempts still in flight when another wins are told
/// as cancelled, with the time they ran, before the call's end; every
/// event of the call carries the same call.
#[tokio::test(start_paused = true)]
async fn a_hedged_calls_losers_are_told_cancelled_before_its_end() {
    setup();
    let calls = std::sync::atomic::AtomicU32::new(0);
    assert_eq!(third_wins(&calls).await, Ok(3));
    let name = concat!(module_path!(), "::third_wins");
    use AttemptKind::{Hedge, Original};
    let cancelled = AttemptOutcome::Cancelled;
    let mut told = events(name);
    // (The losers in the order of their slots.)
    told[1..3].sort_by_key(|e| match e {
        Event::Attempt { number, .. } => *number,
        _ => 0,
    });
    assert_eq!(
        told,
        [
            attempt(Hedge, 3, AttemptOutcome::Ok, 10 * MS),
            attempt(Original, 1, cancelled, 50 * MS),
            attempt(Hedge, 2, cancelled, 30 * MS),
            Event::Call {
                outcome: CallOutcome::Ok,
                attempts: 3,
                took: 50 * MS
            },
        ]
    );
    let ids = call_ids(name);
    assert_eq!(ids.len(), 4);
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
}

/// Two calls in flight at once, begun at the same instant of the paused
/// clock, are two calls.
#[tokio::test(start_paused = true)]
async fn calls_begun_at_once_are_told_apart() {
    setup();
    #[retry(immediate, attempts = 2)]
    async fn twin(fail: bool) -> Result<(), &'static str> {
        tokio::time::sleep(MS).await;
        if fail { Err("down") } else { Ok(()) }
    }
    let (a, b) = tokio::join!(twin(true), twin(true));
    assert_eq!((a, b), (Err("down"), Err("down")));
    let mut ids = call_ids(concat!(module_path!(), "::twin"));
    assert_eq!(ids.len(), 6, "two attempts and an end per call");
    assert_eq!(ids[0].start(), ids[5].start(), "begun at once");
    ids.sort_by_key(|id| format!("{id:?}"));
    ids.dedup();
    assert_eq!(ids.len(), 2, "{ids:?}");
}

/// `Policy::retry` under its name, giving up: the reason, and the `Ok` a
/// `when_ok` rejected.
#[test]
fn a_policy_that_gives_up_tells_its_reason() {
    setup();
    const F: &str = "recorder::gives_up";
    static POLICY: Policy = Policy::immediate().attempts(2).named(F);
    let result: Result<(), &str> = POLICY.retry(|| Err("down"));
    assert_eq!(result, Err("down"));
    let outcomes: Vec<_> = events(F)
        .into_iter()
        .map(|e| match e {
            Event::Attempt {
                kind,
                number,
                outcome,
                ..
            } => format!("{} {number} {}", kind.as_str(), outcome.as_str()),
            Event::Call {
                outcome, attempts, ..
            } => format!(
                "{} {:?} after {attempts}",
                outcome.as_str(),
                match outcome {
                    CallOutcome::GaveUp(reason) => Some(reason),
                    _ => None,
                }
            ),
            Event::Delay(d) => format!("delay {d:?}"),
            other => panic!("not a call's event: {other:?}"),
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            "original 1 error",
            "delay 0ns",
            "retry 2 error",
            "gave_up Some(Attempts) after 2"
        ]
    );

    const G: &str = "recorder::rejected";
    let policy = Policy::immediate().attempts(2).named(G);
    let result: Result<u32, ()> = policy.retrying(|| Ok(7)).when_ok(|_: &u32| true).call();
    assert_eq!(result, Ok(7), "the last `Ok`, unchanged");
    let told: Vec<_> = events(G)
        .into_iter()
        .map(|e| match e {
            Event::Attempt { outcome, .. } => outcome.as_str(),
            Event::Call { outcome, .. } => outcome.as_str(),
            Event::Delay(_) => "delay",
            other => panic!("not a call's event: {other:?}"),
        })
        .collect();
    assert_eq!(told, ["rejected_ok", "delay", "rejected_ok", "gave_up"]);
}

/// A named breaker tells each change of state; a named budget its tokens
/// after each spend and refill; unnamed ones tell nothing.
#[test]
fn named_breakers_and_budgets_tell_their_state() {
    setup();
    const B: &str = "recorder::breaker";
    static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_millis(20)).named(B);
    let policy = Policy::immediate()
        .attempts(1)
        .named("recorder::through_breaker");
    let down: Result<(), Error<&str>> = policy
        .retrying(|| Err(Error::Inner("down")))
        .circuit(&BREAKER)
        .call();
    assert!(down.is_err());
    std::thread::sleep(Duration::from_millis(30));
    let up: Result<(), Error<&str>> = policy.retrying(|| Ok(())).circuit(&BREAKER).call();
    assert_eq!(up, Ok(()));
    assert_eq!(
        events(B),
        [
            Event::Breaker(CircuitState::Open),
            Event::Breaker(CircuitState::HalfOpen),
            Event::Breaker(CircuitState::Closed),
        ]
    );

    const T: &str = "recorder::budget";
    static BUDGET: RetryBudget = RetryBudget::new(2, 0.5).named(T);
    assert!(BUDGET.try_spend());
    BUDGET.deposit();
    assert_eq!(events(T), [Event::Budget(1.0), Event::Budget(1.5)]);

    static UNNAMED: RetryBudget = RetryBudget::new(2, 0.5);
    let before = KEEP.0.lock().unwrap().len();
    assert!(UNNAMED.try_spend());
    let after = KEEP.0.lock().unwrap().len();
    // (Other tests run meanwhile: only a budget's event would be ours.)
    assert!(
        KEEP.0.lock().unwrap()[before..after]
            .iter()
            .all(|(_, e)| !matches!(e, Event::Budget(_)))
    );
}

#[derive(Clone, Copy)]
enum Busy {
    Transient,
    Gone,
}

#[retry(when = |e: &u32| if *e < 2 { Busy::Transient } else { Busy::Gone },
        on(Busy::Transient, constant("1ms"), attempts = 5),
        on(Busy::Gone, stop))]
async fn classified(calls: &mut u32) -> Result<(), u32> {
    *calls += 1;
    Err(*calls)
}

#[retry(immediate, attempts = 2)]
async fn without_kinds() -> Result<(), u32> {
    Err(7)
}

/// A call with kinds that gave up tells the kind of its last failure; a
/// call without kinds, none.
#[tokio::test(start_paused = true)]
async fn a_call_with_kinds_tells_its_last_failure_kind() {
    setup();
    assert_eq!(classified(&mut 0).await, Err(2));
    assert_eq!(without_kinds().await, Err(7));
    let ended = FAILURE_KINDS.lock().unwrap().clone();
    let of = |name: &str| -> Vec<Option<&'static str>> {
        ended
            .iter()
            .filter(|(f, _)| *f == name)
            .map(|(_, k)| *k)
            .collect()
    };
    assert_eq!(
        of(concat!(module_path!(), "::classified")),
        [Some("Busy::Gone")]
    );
    assert_eq!(of(concat!(module_path!(), "::without_kinds")), [None]);
}

static INJECTED: backoff_runtime::Chaos<&'static str> =
    backoff_runtime::Chaos::new(4).fault(1.0, || "injected");

#[retry(immediate, attempts = 2, chaos = INJECTED)]
fn injected() -> Result<(), &'static str> {
    Ok(())
}

/// A fault `chaos` injects is recorded as the attempt's error, and the
/// call's end as a real give-up.
#[test]
fn injected_faults_are_recorded_as_real_errors() {
    setup();
    assert_eq!(injected(), Err("injected"));
    let told = events(concat!(module_path!(), "::injected"));
    let outcomes: Vec<_> = told
        .iter()
        .map(|e| match e {
            Event::Attempt {
                number, outcome, ..
            } => format!("attempt {number}: {outcome:?}"),
            Event::Call {
                outcome, attempts, ..
            } => format!("call: {outcome:?} after {attempts}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            "attempt 1: Error",
            "Delay(0ns)",
            "attempt 2: Error",
            "call: GaveUp(Attempts) after 2"
        ]
    );
}
