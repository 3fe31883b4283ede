//! Hedged calls (`backoff_runtime::hedge`) on tokio's paused clock, with
//! exact times: when each attempt starts, which outcome wins, what is
//! dropped and when, what the budget and the breaker allow, the hooks'
//! view, and that the future is `Send`.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_workspace_tests::LogNormal;

use backoff_runtime::{
    AttemptContext, AttemptKind, CircuitBreaker, CircuitOpen, CircuitState, Decision, GiveUp,
    GiveUpReason, HedgeDelay, Latency, Policy, RetryBudget,
};
use tokio::time::{Instant, sleep};

const MS: fn(u64) -> Duration = Duration::from_millis;

/// One attempt's script: how long it runs, and what it returns.
#[derive(Clone, Copy)]
struct Step {
    takes: u64,
    outcome: Result<u32, u32>,
}

const fn ok(takes: u64, value: u32) -> Step {
    Step {
        takes,
        outcome: Ok(value),
    }
}

const fn err(takes: u64, code: u32) -> Step {
    Step {
        takes,
        outcome: Err(code),
    }
}

/// What the attempts did: when each started and when each was dropped
/// unfinished (milliseconds since the test began).
#[derive(Default, Debug)]
struct Log {
    started: Vec<u64>,
    dropped: Vec<(usize, u64)>,
}

/// Sets its attempt's drop time unless disarmed (the attempt finished).
struct Guard {
    index: usize,
    log: Rc<RefCell<Log>>,
    t0: Instant,
    armed: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.armed {
            let at = ms_since(self.t0);
            self.log.borrow_mut().dropped.push((self.index, at));
        }
    }
}

fn ms_since(t0: Instant) -> u64 {
    u64::try_from(t0.elapsed().as_millis()).expect("short test")
}

/// A scripted service: attempt k runs `script[k]`.
struct Service {
    script: Vec<Step>,
    log: Rc<RefCell<Log>>,
    t0: Instant,
}

impl Service {
    fn new(script: &[Step]) -> Self {
        Service {
            script: script.to_vec(),
            log: Rc::default(),
            t0: Instant::now(),
        }
    }

    /// One attempt's future.
    fn attempt(&self) -> impl Future<Output = Result<u32, u32>> + use<> {
        let index = {
            let mut log = self.log.borrow_mut();
            log.started.push(ms_since(self.t0));
            log.started.len() - 1
        };
        let step = self.script[index];
        let guard = Guard {
            index,
            log: self.log.clone(),
            t0: self.t0,
            armed: true,
        };
        async move {
            let mut guard = guard;
            sleep(MS(step.takes)).await;
            guard.armed = false;
            step.outcome
        }
    }

    fn started(&self) -> Vec<u64> {
        self.log.borrow().started.clone()
    }

    fn dropped(&self) -> Vec<(usize, u64)> {
        self.log.borrow().dropped.clone()
    }

    fn now(&self) -> u64 {
        ms_since(self.t0)
    }
}

#[tokio::test(start_paused = true)]
async fn each_hedge_starts_the_delay_after_the_previous_attempt() {
    let service = Service::new(&[ok(100, 1), ok(100, 2), ok(100, 3)]);
    let result = Policy::immediate()
        .attempts(3)
        .hedge_async::<3>(HedgeDelay::After(MS(20)))
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Ok(1));
    assert_eq!(service.started(), [0, 20, 40]);
    assert_eq!(service.now(), 100);
    // The two hedges still in flight were dropped when attempt 1 won.
    assert_eq!(service.dropped(), [(1, 100), (2, 100)]);
}

#[tokio::test(start_paused = true)]
async fn a_fast_failure_starts_the_next_attempt_at_once() {
    let service = Service::new(&[err(5, 1), ok(100, 2), ok(100, 3)]);
    let kinds = RefCell::new(Vec::new());
    let result = Policy::immediate()
        .attempts(3)
        .hedge_async::<3>(HedgeDelay::After(MS(20)))
        .on_retry(
            |outcome: &Result<u32, u32>, event: &backoff_runtime::RetryEvent| {
                kinds.borrow_mut().push((Some(*outcome), event.kind));
            },
        )
        .on_hedge(|event| kinds.borrow_mut().push((None, event.kind)))
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Ok(2));
    // Attempt 2 at 5 ms (the failure), attempt 3 the delay after it.
    assert_eq!(service.started(), [0, 5, 25]);
    assert_eq!(service.now(), 105);
    assert_eq!(
        *kinds.borrow(),
        [
            (Some(Err(1)), AttemptKind::Retry),
            (None, AttemptKind::Hedge)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn on_hedge_hears_exactly_the_hedges_and_on_retry_exactly_the_retried_failures() {
    // Attempt 1 hangs; the delay starts 2 at 20 ms, which fails at 25 and
    // starts 3 at once, which fails at 28 and starts 4; the delay after 4
    // starts 5 at 48, which wins at 58.
    let service = Service::new(&[ok(1000, 1), err(5, 2), err(3, 3), ok(100, 4), ok(10, 5)]);
    let retried = RefCell::new(Vec::new());
    let hedged = RefCell::new(Vec::new());
    let result = Policy::immediate()
        .attempts(5)
        .hedge_async::<5>(HedgeDelay::After(MS(20)))
        .on_retry(
            |outcome: &Result<u32, u32>, event: &backoff_runtime::RetryEvent| {
                retried
                    .borrow_mut()
                    .push((*outcome, event.kind, event.delay, service.now()));
            },
        )
        .on_hedge(|event| {
            hedged
                .borrow_mut()
                .push((event.kind, event.delay, service.now()))
        })
        .call_with_context(|context: AttemptContext| {
            // (Each attempt's kind is what the hooks heard of it.)
            assert_eq!(
                context.kind,
                match context.attempt {
                    1 => AttemptKind::Original,
                    2 | 5 => AttemptKind::Hedge,
                    _ => AttemptKind::Retry,
                }
            );
            service.attempt()
        })
        .await;
    assert_eq!(result, Ok(5));
    assert_eq!(service.started(), [0, 20, 25, 28, 48]);
    assert_eq!(service.now(), 58);
    assert_eq!(
        *retried.borrow(),
        [
            (Err(2), AttemptKind::Retry, Duration::ZERO, 25),
            (Err(3), AttemptKind::Retry, Duration::ZERO, 28),
        ]
    );
    assert_eq!(
        *hedged.borrow(),
        [
            (AttemptKind::Hedge, MS(20), 20),
            (AttemptKind::Hedge, MS(20), 48)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_rejected_ok_is_told_to_on_retry_and_no_hedge_to_on_hedge_without_one() {
    // A 503 answered at once starts the next attempt at once: `on_retry`
    // hears of it with the `Ok`; no delay ran out, so `on_hedge` never runs.
    let service = Service::new(&[ok(5, 503), ok(5, 200)]);
    let retried = RefCell::new(Vec::new());
    let hedges = RefCell::new(0);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::After(MS(20)))
        .when_ok(|status: &u32| *status == 503)
        .on_retry(
            |outcome: &Result<u32, u32>, event: &backoff_runtime::RetryEvent| {
                retried.borrow_mut().push((*outcome, event.kind))
            },
        )
        .on_hedge(|_| *hedges.borrow_mut() += 1)
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Ok(200));
    assert_eq!(service.started(), [0, 5]);
    assert_eq!(*retried.borrow(), [(Ok(503), AttemptKind::Retry)]);
    assert_eq!(*hedges.borrow(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_first_accepted_outcome_wins_and_the_slow_attempt_is_dropped() {
    let service = Service::new(&[ok(1000, 1), ok(10, 2)]);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::After(MS(20)))
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Ok(2));
    assert_eq!(service.started(), [0, 20]);
    assert_eq!(service.now(), 30);
    assert_eq!(service.dropped(), [(0, 30)]);
}

#[tokio::test(start_paused = true)]
async fn stop_ends_the_call_at_once() {
    let service = Service::new(&[ok(500, 1), err(5, 400), ok(10, 3)]);
    let report = RefCell::new(None);
    let result = Policy::immediate()
        .attempts(3)
        .hedge_async::<3>(HedgeDelay::After(MS(20)))
        .when(|e: &u32| {
            if *e == 400 {
                Decision::Stop
            } else {
                Decision::Retry
            }
        })
        .on_giveup(|_: &Result<u32, u32>, g: &GiveUp| *report.borrow_mut() = Some(*g))
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Err(400));
    assert_eq!(service.started(), [0, 20]);
    assert_eq!(service.now(), 25);
    assert_eq!(service.dropped(), [(0, 25)]);
    let report = report.borrow().expect("gave up");
    assert_eq!(
        (report.attempts, report.reason, report.hedges),
        (2, GiveUpReason::Stopped, 1)
    );
}

#[tokio::test(start_paused = true)]
async fn when_every_attempt_fails_the_last_error_is_returned() {
    // Attempt 1 fails last, at 100 ms; 2 fails at 30 and starts 3 at once,
    // which fails at 40.
    let service = Service::new(&[err(100, 1), err(10, 2), err(10, 3)]);
    let report = RefCell::new(None);
    let result = Policy::immediate()
        .attempts(3)
        .hedge_async::<3>(HedgeDelay::After(MS(20)))
        .on_giveup(|_: &Result<u32, u32>, g: &GiveUp| *report.borrow_mut() = Some(*g))
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Err(1));
    assert_eq!(service.started(), [0, 20, 30]);
    assert_eq!(service.now(), 100);
    assert_eq!(service.dropped(), []);
    let report = report.borrow().expect("gave up");
    assert_eq!(
        (report.attempts, report.reason, report.hedges),
        (3, GiveUpReason::Attempts, 1)
    );
}

#[tokio::test(start_paused = true)]
async fn the_attempt_limit_bounds_the_attempts_started() {
    // Slow attempts: the limit, not a success, stops the hedging.
    let service = Service::new(&[ok(100, 1), ok(100, 2), ok(100, 3), ok(100, 4)]);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<4>(HedgeDelay::After(MS(20)))
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Ok(1));
    assert_eq!(service.started(), [0, 20]);

    // Fast failures: each starts the next at once, up to the limit.
    let service = Service::new(&[err(1, 1), err(1, 2), err(1, 3), err(1, 4)]);
    let result = Policy::immediate()
        .attempts(3)
        .hedge_async::<4>(HedgeDelay::After(MS(20)))
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Err(3));
    assert_eq!(service.started(), [0, 1, 2]);
}

#[tokio::test(start_paused = true)]
async fn each_hedge_spends_the_budget_and_an_empty_one_stops_hedging() {
    // One token: the first hedge spends it, the second is refused.
    let budget = RetryBudget::new(1, 0.0);
    let service = Service::new(&[ok(100, 1), ok(100, 2), ok(100, 3)]);
    let result = Policy::immediate()
        .attempts(3)
        .hedge_async::<3>(HedgeDelay::After(MS(20)))
        .budget(&budget)
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Ok(1));
    assert_eq!(service.started(), [0, 20]);
    assert_eq!(budget.tokens(), 0.0);

    // Empty: no hedge at all, and a failure is not retried either.
    let service = Service::new(&[ok(100, 1), ok(100, 2)]);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::After(MS(20)))
        .budget(&budget)
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Ok(1));
    assert_eq!(service.started(), [0]);
    let service = Service::new(&[err(5, 7), ok(1, 2)]);
    let report = RefCell::new(None);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::After(MS(20)))
        .budget(&budget)
        .on_giveup(|_: &Result<u32, u32>, g: &GiveUp| *report.borrow_mut() = Some(g.reason))
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Err(7));
    assert_eq!(service.started(), [0]);
    assert_eq!(*report.borrow(), Some(GiveUpReason::Budget));

    // A success deposits the ratio.
    let budget = RetryBudget::new(2, 0.5);
    let service = Service::new(&[ok(100, 1), ok(100, 2)]);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::After(MS(20)))
        .budget(&budget)
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Ok(1));
    assert_eq!(budget.tokens(), 1.5);
}

#[derive(Debug, PartialEq)]
enum CallError {
    Service(u32),
    Open,
}

impl From<CircuitOpen> for CallError {
    fn from(_: CircuitOpen) -> Self {
        CallError::Open
    }
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_refuses_hedges_and_the_first_attempt() {
    // One failure opens it: the retry that failure would start is refused,
    // and the call gives up with the service's error.
    let breaker = CircuitBreaker::new(1, 1, Duration::from_secs(60));
    let service = Service::new(&[err(5, 1), ok(1, 2)]);
    let report = RefCell::new(None);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::After(MS(20)))
        .circuit(&breaker, CallError::from)
        .on_giveup(|_: &Result<u32, CallError>, g: &GiveUp| *report.borrow_mut() = Some(g.reason))
        .call(|| async { service.attempt().await.map_err(CallError::Service) })
        .await;
    assert_eq!(result, Err(CallError::Service(1)));
    assert_eq!(service.started(), [0]);
    assert_eq!(breaker.state(), CircuitState::Open);
    assert_eq!(*report.borrow(), Some(GiveUpReason::CircuitOpen));

    // Open: the next call fails fast, no attempt made.
    let service = Service::new(&[ok(1, 1)]);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::After(MS(20)))
        .circuit(&breaker, CallError::from)
        .call(|| async { service.attempt().await.map_err(CallError::Service) })
        .await;
    assert_eq!(result, Err(CallError::Open));
    assert_eq!(service.started(), []);

    // A slow attempt whose hedge the breaker refuses: another caller's
    // failure opened it meanwhile.
    let breaker = CircuitBreaker::new(1, 1, Duration::from_secs(60));
    let service = Service::new(&[ok(100, 1), ok(1, 2)]);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::After(MS(20)))
        .circuit(&breaker, CallError::from)
        .call(|| {
            let attempt = service.attempt();
            let breaker = &breaker;
            async move {
                if let Ok(permit) = breaker.acquire(std::time::Instant::now()) {
                    permit.failure(std::time::Instant::now());
                }
                attempt.await.map_err(CallError::Service)
            }
        })
        .await;
    assert_eq!(result, Ok(1));
    assert_eq!(service.started(), [0]);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_loser_is_no_failure_for_the_breaker() {
    let breaker = CircuitBreaker::new(1, 1, Duration::from_secs(60));
    let service = Service::new(&[ok(1000, 1), ok(10, 2)]);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::After(MS(20)))
        .circuit(&breaker, CallError::from)
        .call(|| async { service.attempt().await.map_err(CallError::Service) })
        .await;
    assert_eq!(result, Ok(2));
    assert_eq!(service.dropped(), [(0, 30)]);
    assert_eq!(breaker.state(), CircuitState::Closed);
}

#[tokio::test(start_paused = true)]
async fn the_learned_delay_follows_every_attempts_latency() {
    static LATENCY: Latency = Latency::new();
    // Cold: the default delay (100 ms).
    let service = Service::new(&[ok(150, 1), ok(10, 2)]);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::P95(&LATENCY))
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Ok(2));
    assert_eq!(service.started(), [0, 100]);
    // The winner's 10 ms, and the loser's "at least 110 ms".
    assert_eq!(LATENCY.samples(), 2);
    // Warm it with 10 ms calls: p95 falls inside the bucket [8, 11.31) ms.
    for _ in 0..30 {
        let service = Service::new(&[ok(10, 1)]);
        let result = Policy::immediate()
            .attempts(2)
            .hedge_async::<2>(HedgeDelay::P95(&LATENCY))
            .call(|| service.attempt())
            .await;
        assert_eq!(result, Ok(1));
        assert_eq!(service.started(), [0]);
    }
    let p95 = LATENCY.quantile(0.95); // readable at run time
    assert!(
        p95 > MS(11) && p95 < Duration::from_nanos(11_313_708),
        "{p95:?}"
    );
    let service = Service::new(&[ok(1000, 1), ok(10, 2)]);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::P95(&LATENCY))
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Ok(2));
    // (Paused time wakes the timer at its millisecond tick, 12 ms.)
    assert_eq!(service.started(), [0, 12]);
}

/// A learned delay is read when `call` makes the future, not at its first
/// poll: latencies recorded in between move the next call's delay only.
#[tokio::test(start_paused = true)]
async fn a_learned_delay_is_read_when_call_makes_the_future() {
    static LATENCY: Latency = Latency::new();
    let service = Service::new(&[ok(150, 1), ok(10, 2)]);
    let policy = Policy::immediate().attempts(2);
    // Cold: the call reads the default delay (100 ms) here...
    let call = policy
        .hedge_async::<2>(HedgeDelay::P95(&LATENCY))
        .call(|| service.attempt());
    // ...and 10 ms latencies learned before its first poll do not move it.
    for _ in 0..40 {
        LATENCY.record(MS(10));
    }
    assert!(LATENCY.quantile(0.95) < MS(12));
    assert_eq!(call.await, Ok(2));
    assert_eq!(service.started(), [0, 100]);
    // The next call reads the learned delay.
    let service = Service::new(&[ok(1000, 1), ok(10, 2)]);
    let result = policy
        .hedge_async::<2>(HedgeDelay::P95(&LATENCY))
        .call(|| service.attempt())
        .await;
    assert_eq!(result, Ok(2));
    assert_eq!(service.started(), [0, 12]);
}

#[test]
fn the_hedged_future_is_send_and_runs_on_a_multi_thread_runtime() {
    fn assert_send<T: Send>(t: T) -> T {
        t
    }
    // (A multi-thread runtime cannot pause its clock: attempt 1 never
    // ends, so the hedge wins whatever the timing, and nothing is timed.)
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("runtime");
    let calls = Arc::new(AtomicU32::new(0));
    let result = rt.block_on(async {
        let calls = calls.clone();
        let task = tokio::spawn(assert_send(async move {
            static POLICY: Policy = Policy::immediate().attempts(3);
            let result: Result<u32, u32> = POLICY
                .hedge_async::<3>(HedgeDelay::After(MS(20)))
                .call(|| {
                    let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
                    async move {
                        if n == 1 {
                            std::future::pending::<()>().await;
                        }
                        sleep(MS(1)).await;
                        Ok(n)
                    }
                })
                .await;
            result
        }));
        task.await.expect("the task")
    });
    assert_eq!(result, Ok(2));
    assert_eq!(calls.load(Ordering::Relaxed), 2);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_call_drops_every_attempt_in_flight() {
    let service = Service::new(&[ok(1000, 1), ok(1000, 2), ok(1000, 3)]);
    let policy = Policy::immediate().attempts(3);
    let call = policy
        .hedge_async::<3>(HedgeDelay::After(MS(20)))
        .call(|| service.attempt());
    let timed_out = tokio::time::timeout(MS(50), call).await;
    assert!(timed_out.is_err());
    assert_eq!(service.started(), [0, 20, 40]);
    assert_eq!(service.dropped(), [(0, 50), (1, 50), (2, 50)]);
}

#[tokio::test(start_paused = true)]
async fn every_failed_attempt_is_a_failure_for_the_breaker() {
    // Two failures open it: the hedge's at 30 ms (no attempt left to
    // start), then the first attempt's at 100 ms.
    let breaker = CircuitBreaker::new(2, 1, Duration::from_secs(60));
    let service = Service::new(&[err(100, 1), err(10, 2)]);
    let result = Policy::immediate()
        .attempts(2)
        .hedge_async::<2>(HedgeDelay::After(MS(20)))
        .circuit(&breaker, CallError::from)
        .call(|| async { service.attempt().await.map_err(CallError::Service) })
        .await;
    assert_eq!(result, Err(CallError::Service(1)));
    assert_eq!(service.started(), [0, 20]);
    assert_eq!(service.now(), 100);
    assert_eq!(breaker.state(), CircuitState::Open);
}

/// What the attribute's `tracing` events would say: through the trace the
/// expansion hands a hedged call.
#[derive(Default)]
struct Traces(RefCell<Vec<String>>);

impl backoff_runtime::__private::Trace<u32> for &Traces {
    fn retry(&self, error: &u32, event: &backoff_runtime::RetryEvent) {
        let (attempt, delay) = (event.attempt, event.delay);
        self.0.borrow_mut().push(format!(
            "retry {error} after attempt {attempt} in {delay:?}"
        ));
    }
    fn give_up(&self, error: &u32, report: &GiveUp) {
        self.0.borrow_mut().push(format!(
            "give up {error} after {} attempts ({} hedges)",
            report.attempts, report.hedges
        ));
    }
}

#[tokio::test(start_paused = true)]
async fn a_traced_call_reports_its_retries_and_its_giving_up() {
    let traces = Traces::default();
    let service = Service::new(&[err(100, 1), err(10, 2), err(10, 3)]);
    let result = Policy::immediate()
        .attempts(3)
        .hedge_async::<3>(HedgeDelay::After(MS(20)))
        .call_op(|| service.attempt(), &traces)
        .await;
    assert_eq!(result, Err(1));
    assert_eq!(
        *traces.0.borrow(),
        [
            "retry 2 after attempt 2 in 0ns",
            "give up 1 after 3 attempts (1 hedges)"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_hedged_call_its_caller_cancels_counts_one_breaker_failure() {
    // Three attempts in flight when the caller's timeout drops the call:
    // one failure (as a plain call's cancellation), not three.
    let breaker = CircuitBreaker::new(3, 1, Duration::from_secs(60));
    for cancelled in 1..=3 {
        let service = Service::new(&[ok(1000, 1), ok(1000, 2), ok(1000, 3)]);
        let policy = Policy::immediate().attempts(3);
        let call = policy
            .hedge_async::<3>(HedgeDelay::After(MS(20)))
            .circuit(&breaker, CallError::from)
            .call(|| async { service.attempt().await.map_err(CallError::Service) });
        assert!(tokio::time::timeout(MS(100), call).await.is_err());
        assert_eq!(service.started(), [0, 20, 40]);
        assert_eq!(service.dropped(), [(0, 100), (1, 100), (2, 100)]);
        let expected = if cancelled < 3 {
            CircuitState::Closed
        } else {
            CircuitState::Open
        };
        assert_eq!(
            breaker.state(),
            expected,
            "after {cancelled} cancelled calls"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_whose_first_attempt_failed_adds_no_failure_for_its_hedges() {
    // Attempt 1 fails (one failure); the retry starts beside the hedge in
    // flight; the caller drops the call: nothing more is counted.
    let breaker = CircuitBreaker::new(2, 1, Duration::from_secs(60));
    let service = Service::new(&[err(30, 1), ok(1000, 2), ok(1000, 3)]);
    let policy = Policy::immediate().attempts(3);
    let call = policy
        .hedge_async::<3>(HedgeDelay::After(MS(20)))
        .circuit(&breaker, CallError::from)
        .call(|| async { service.attempt().await.map_err(CallError::Service) });
    assert!(tokio::time::timeout(MS(100), call).await.is_err());
    assert_eq!(service.started(), [0, 20, 30]);
    assert_eq!(breaker.state(), CircuitState::Closed);
}

#[test]
#[should_panic(expected = "a hedge quantile is in (0, 1)")]
fn a_nan_quantile_is_refused() {
    static LATENCY: Latency = Latency::new();
    let policy = Policy::immediate().attempts(2);
    let _ = policy.hedge_async::<2>(HedgeDelay::Quantile(&LATENCY, f64::NAN));
}

/// The share of `calls` hedged calls (2 attempts) that started a hedge,
/// against a seeded lognormal latency, and the delay learned.
async fn hedge_rate(sigma: f64, q: f64, calls: u32) -> (f64, Duration) {
    let latency = Latency::new();
    let rng = RefCell::new(LogNormal::new(0x5EED, sigma));
    let policy = Policy::immediate().attempts(2);
    let mut hedged = 0u32;
    for _ in 0..calls {
        let started = std::cell::Cell::new(0u32);
        let result: Result<(), ()> = policy
            .hedge_async::<2>(HedgeDelay::Quantile(&latency, q))
            .call(|| {
                started.set(started.get() + 1);
                let takes = rng.borrow_mut().draw();
                async move {
                    sleep(takes).await;
                    Ok(())
                }
            })
            .await;
        assert_eq!(result, Ok(()));
        hedged += started.get() - 1;
    }
    (f64::from(hedged) / f64::from(calls), latency.quantile(q))
}

#[tokio::test(start_paused = true)]
async fn a_learned_percentile_hedges_its_share_of_calls_on_a_heavy_tail() {
    // Lognormal, median 10 ms, σ 1.5 (p95 118 ms, p99 328 ms). Learning
    // only the winners' latencies hedged 11 % of calls at "p95" (learned:
    // 64 ms) and 2.8 % at "p99"; every attempt's, losers censored, gives
    // about 5 % and 1 %.
    let (p95, learned95) = hedge_rate(1.5, 0.95, 20_000).await;
    assert!(
        (0.03..=0.07).contains(&p95),
        "p95 hedged {p95}, learned {learned95:?}"
    );
    assert!(learned95 > MS(90) && learned95 < MS(160), "{learned95:?}");
    let (p99, learned99) = hedge_rate(1.5, 0.99, 20_000).await;
    assert!(
        (0.005..=0.02).contains(&p99),
        "p99 hedged {p99}, learned {learned99:?}"
    );
    assert!(learned99 > MS(240) && learned99 < MS(460), "{learned99:?}");
    // σ 1 (p95 52 ms, p99 102 ms). (Eight other seeds gave 4.8–5.2 % and
    // 0.9–1.1 % at both σ.)
    let (p95, learned95) = hedge_rate(1.0, 0.95, 20_000).await;
    assert!(
        (0.03..=0.07).contains(&p95),
        "p95 hedged {p95}, learned {learned95:?}"
    );
    let (p99, learned99) = hedge_rate(1.0, 0.99, 20_000).await;
    assert!(
        (0.005..=0.02).contains(&p99),
        "p99 hedged {p99}, learned {learned99:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn attempts_dropped_with_the_call_teach_the_estimate_at_least_what_they_ran() {
    static LATENCY: Latency = Latency::new();
    let service = Service::new(&[ok(1000, 1), ok(1000, 2)]);
    let policy = Policy::immediate().attempts(2);
    let call = policy
        .hedge_async::<2>(HedgeDelay::P95(&LATENCY))
        .call(|| service.attempt());
    // Cold: the hedge starts after 100 ms; the caller gives up at 150 ms.
    assert!(tokio::time::timeout(MS(150), call).await.is_err());
    assert_eq!(service.dropped(), [(0, 150), (1, 150)]);
    // Two censored samples: "at least 150 ms" and "at least 50 ms".
    assert_eq!(LATENCY.samples(), 2);
}
