//! A schedule per kind of failure: `when` returns the user's own type and
//! each `on(PATTERN, ..)` arm gives its kind a schedule, `stop` or
//! `after = EXPR`; the runtime's `Policy::kinds` and `Decision::Kind` do the
//! same without the attribute.
//!
//! On tokio's paused clock, with `jitter = "none"`, every delay is exact:
//! each kind counts its own retries whatever came between, a kind's
//! `attempts` ends the call at its n-th failure of that kind, `after = d`
//! waits `d` (past `retry_after_max`, gives up at once), `stop` gives up,
//! a top-level `attempts` bounds the whole call, and the kind is in the
//! `GiveUp` report and the `RetryEvent`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Duration;

use backoff_runtime::Kind;
use backoff_runtime::{Decision, GiveUp, GiveUpReason, Jitter, Policy, RetryEvent, retry};

const MS: fn(u64) -> Duration = Duration::from_millis;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Failure {
    Transient,
    Throttled,
    Permanent,
    RetryAfter(Duration),
}

#[derive(Debug, PartialEq)]
struct ApiError(Failure);

fn classify(e: &ApiError) -> Failure {
    e.0
}

use Failure::{Permanent, RetryAfter, Throttled, Transient};

/// A client whose calls fail as scripted, then succeed; it keeps what
/// `on_retry` and `on_giveup` were told.
#[derive(Default)]
struct Client {
    script: RefCell<VecDeque<Failure>>,
    retries: RefCell<Vec<(Duration, Option<&'static str>)>>,
    gave_up: RefCell<Option<GiveUp>>,
}

impl Client {
    fn scripted(failures: &[Failure]) -> Client {
        Client {
            script: RefCell::new(failures.iter().copied().collect()),
            ..Client::default()
        }
    }

    fn next(&self) -> Result<u32, ApiError> {
        match self.script.borrow_mut().pop_front() {
            Some(f) => Err(ApiError(f)),
            None => Ok(7),
        }
    }

    fn heard(&self, event: &RetryEvent) {
        self.retries
            .borrow_mut()
            .push((event.delay, event.failure_kind));
    }

    fn delays(&self) -> Vec<u128> {
        self.retries
            .borrow()
            .iter()
            .map(|r| r.0.as_millis())
            .collect()
    }

    fn report(&self) -> GiveUp {
        self.gave_up.borrow().expect("the call gave up")
    }

    /// The SPEC's example: transient, throttled and permanent failures.
    #[retry(when = classify, jitter = "none",
            on(Failure::Transient, exponential(base = "100ms", max = "5s"), attempts = 5),
            on(Failure::Throttled, exponential(base = "500ms", max = "30s"), attempts = 10),
            on(Failure::RetryAfter(d), after = d),
            on(Failure::Permanent, stop),
            on_retry = |_, event| self.heard(event),
            on_giveup = |_, report| *self.gave_up.borrow_mut() = Some(*report))]
    async fn call(&self) -> Result<u32, ApiError> {
        self.next()
    }

    /// A top-level `attempts` bounds the whole call.
    #[retry(when = classify, jitter = "none", attempts = 4,
            on(Failure::Transient, constant("10ms"), attempts = 10),
            on(Failure::Throttled, constant("20ms"), attempts = 10),
            on(_, stop),
            on_giveup = |_, report| *self.gave_up.borrow_mut() = Some(*report))]
    async fn bounded(&self) -> Result<u32, ApiError> {
        self.next()
    }
}

/// A kind on a composed schedule (a `static` policy of its own) beside one
/// on a builtin: `Transient` retries twice at once then every 300 ms, 5
/// transient failures at most; `Throttled` steps 1 s, 2 s, 5 s.
impl Client {
    #[retry(when = classify, jitter = "none",
            on(Failure::Transient, chain(immediate(times = 2), constant("300ms")), attempts = 5),
            on(Failure::Throttled, steps("1s", "2s", "5s")),
            on(_, stop),
            on_retry = |_, event| self.heard(event),
            on_giveup = |_, report| *self.gave_up.borrow_mut() = Some(*report))]
    async fn composed(&self) -> Result<u32, ApiError> {
        self.next()
    }
}

#[tokio::test(start_paused = true)]
async fn a_kind_retries_on_a_composed_schedule() {
    let client = Client::scripted(&[Transient, Throttled, Transient, Transient, Throttled]);
    let (result, took) = timed(client.composed()).await;
    assert_eq!(result, Ok(7));
    assert_eq!(client.delays(), [0, 1000, 0, 300, 2000]);
    assert_eq!(took, MS(3300));

    // The fifth transient failure ends the call (its limit, 5).
    let client = Client::scripted(&[Transient; 6]);
    let (result, took) = timed(client.composed()).await;
    assert_eq!(result, Err(ApiError(Transient)));
    assert_eq!(client.delays(), [0, 0, 300, 300]);
    assert_eq!(took, MS(600));
    assert_eq!(client.report().reason, GiveUpReason::Attempts);
}

/// Runs `call` on the paused clock: its result and the time it took.
async fn timed<T>(call: impl std::future::Future<Output = T>) -> (T, Duration) {
    let start = tokio::time::Instant::now();
    let result = call.await;
    (result, start.elapsed())
}

#[tokio::test(start_paused = true)]
async fn the_effect_patterns_three_kinds() {
    // Interleaved kinds: each counts its own retries.
    let client = Client::scripted(&[
        Transient, Throttled, Transient, Throttled, Throttled, Transient,
    ]);
    let (result, took) = timed(client.call()).await;
    assert_eq!(result, Ok(7));
    assert_eq!(client.delays(), [100, 500, 200, 1000, 2000, 400]);
    assert_eq!(took, MS(4200));
    let kinds: Vec<_> = client.retries.borrow().iter().map(|r| r.1).collect();
    assert_eq!(
        kinds,
        [
            Some("Failure::Transient"),
            Some("Failure::Throttled"),
            Some("Failure::Transient"),
            Some("Failure::Throttled"),
            Some("Failure::Throttled"),
            Some("Failure::Transient"),
        ]
    );

    // A permanent failure stops at once.
    let client = Client::scripted(&[Throttled, Permanent]);
    let (result, took) = timed(client.call()).await;
    assert_eq!(result, Err(ApiError(Permanent)));
    assert_eq!(took, MS(500));
    let report = client.report();
    assert_eq!((report.attempts, report.reason), (2, GiveUpReason::Stopped));
    assert_eq!(report.failure_kind, Some("Failure::Permanent"));
}

#[tokio::test(start_paused = true)]
async fn a_kinds_attempts_end_the_call_at_its_nth_failure_of_that_kind() {
    // Five transient failures with throttled ones between: the fifth
    // transient one ends the call, whatever the total.
    let client = Client::scripted(&[
        Transient, Throttled, Transient, Transient, Throttled, Transient, Transient, Transient,
    ]);
    let (result, took) = timed(client.call()).await;
    assert_eq!(result, Err(ApiError(Transient)));
    assert_eq!(client.delays(), [100, 500, 200, 400, 1000, 800]);
    assert_eq!(took, MS(3000));
    let report = client.report();
    assert_eq!(
        (report.attempts, report.reason),
        (7, GiveUpReason::Attempts)
    );
    assert_eq!(report.failure_kind, Some("Failure::Transient"));
}

#[tokio::test(start_paused = true)]
async fn after_waits_the_servers_delay_exactly_and_past_the_bound_gives_up() {
    let client = Client::scripted(&[RetryAfter(MS(3000)), Transient, RetryAfter(MS(1234))]);
    let (result, took) = timed(client.call()).await;
    assert_eq!(result, Ok(7));
    // `after` does not advance the transient schedule.
    assert_eq!(client.delays(), [3000, 100, 1234]);
    assert_eq!(took, MS(4334));
    assert_eq!(client.retries.borrow()[0].1, Some("Failure::RetryAfter(d)"));

    // Ten minutes is past the default `retry_after_max` (five): at once.
    let client = Client::scripted(&[Transient, RetryAfter(Duration::from_secs(600))]);
    let (result, took) = timed(client.call()).await;
    assert_eq!(result, Err(ApiError(RetryAfter(Duration::from_secs(600)))));
    assert_eq!(took, MS(100));
    let report = client.report();
    assert_eq!(
        (report.attempts, report.reason),
        (2, GiveUpReason::Deadline)
    );
    assert_eq!(report.failure_kind, Some("Failure::RetryAfter(d)"));
}

#[tokio::test(start_paused = true)]
async fn a_top_level_attempts_bounds_the_whole_call() {
    let client = Client::scripted(&[Transient, Throttled, Transient, Throttled, Transient]);
    let (result, took) = timed(client.bounded()).await;
    assert_eq!(result, Err(ApiError(Throttled)));
    assert_eq!(took, MS(10 + 20 + 10));
    let report = client.report();
    assert_eq!(
        (report.attempts, report.reason),
        (4, GiveUpReason::Attempts)
    );
    assert_eq!(report.failure_kind, Some("Failure::Throttled"));

    // `on(_, stop)` opts out of exhaustiveness: any other kind stops.
    let client = Client::scripted(&[Permanent]);
    assert_eq!(client.bounded().await, Err(ApiError(Permanent)));
    assert_eq!(client.report().reason, GiveUpReason::Stopped);
    assert_eq!(client.report().failure_kind, Some("_"));
}

thread_local! {
    static SCRIPT: RefCell<VecDeque<Failure>> = const { RefCell::new(VecDeque::new()) };
    static SLEPT: RefCell<Vec<u128>> = const { RefCell::new(Vec::new()) };
}

fn record_sleep(d: Duration) {
    SLEPT.with(|s| s.borrow_mut().push(d.as_millis()));
}

#[retry(when = classify, jitter = "none", sleep = record_sleep,
        on(Failure::Transient, linear(base = "10ms"), attempts = 3),
        on(Failure::Throttled, constant("1s")),
        on(Failure::RetryAfter(wait), after = wait),
        on(Failure::Permanent, stop))]
fn blocking() -> Result<u32, ApiError> {
    match SCRIPT.with(|s| s.borrow_mut().pop_front()) {
        Some(f) => Err(ApiError(f)),
        None => Ok(1),
    }
}

#[test]
fn a_plain_fn_counts_each_kind_too() {
    SCRIPT.with(|s| *s.borrow_mut() = [Transient, Throttled, RetryAfter(MS(5)), Transient].into());
    assert_eq!(blocking(), Ok(1));
    assert_eq!(SLEPT.with(|s| s.take()), [10, 1000, 5, 20]);
    // The throttled arm has the default limit, 3 failures of its kind.
    SCRIPT.with(|s| *s.borrow_mut() = [Throttled, Transient, Throttled, Throttled].into());
    assert_eq!(blocking(), Err(ApiError(Throttled)));
    assert_eq!(SLEPT.with(|s| s.take()), [1000, 10, 1000]);
}

/// The same schedules without the attribute: a table of kinds and a
/// `when` that returns `Decision::Kind`.
#[tokio::test(start_paused = true)]
async fn the_runtime_alone_counts_each_kind() {
    static KINDS: [Kind; 3] = [
        Kind::new(
            "transient",
            Policy::exponential(Duration::from_millis(100))
                .max_delay(Duration::from_secs(5))
                .jitter(Jitter::None)
                .attempts(5),
        ),
        Kind::new(
            "throttled",
            Policy::exponential(Duration::from_millis(500))
                .max_delay(Duration::from_secs(30))
                .jitter(Jitter::None)
                .attempts(10),
        ),
        Kind::named("permanent"),
    ];
    static POLICY: Policy = Policy::immediate().unlimited_attempts().kinds(&KINDS);
    fn decide(e: &ApiError) -> Decision {
        match e.0 {
            Transient => Decision::Kind(0),
            Throttled => Decision::Kind(1),
            Permanent => Decision::Kind(2),
            RetryAfter(d) => Decision::RetryAfter(d),
        }
    }
    let client = Client::scripted(&[
        Transient, Throttled, Transient, Throttled, Throttled, Transient,
    ]);
    let start = tokio::time::Instant::now();
    let result = POLICY
        .retrying_async(async || client.next())
        .when(decide)
        .on_retry(|_, event| client.heard(event))
        .call_async()
        .await;
    assert_eq!(result, Ok(7));
    assert_eq!(client.delays(), [100, 500, 200, 1000, 2000, 400]);
    assert_eq!(start.elapsed(), MS(4200));
    assert_eq!(client.retries.borrow()[1].1, Some("throttled"));

    // The state machine by hand: the kind's limit, then the report.
    let mut state = POLICY.start();
    for expected in [100, 200, 400, 800] {
        assert_eq!(state.next_delay_for(Decision::Kind(0)), Some(MS(expected)));
    }
    assert_eq!(state.next_delay_for(Decision::Kind(0)), None);
    let report = state.give_up().unwrap();
    assert_eq!(
        (report.attempts, report.reason),
        (5, GiveUpReason::Attempts)
    );
    assert_eq!(report.failure_kind, Some("transient"));
}

// ---------------------------------------------------------------------------
// throttled(STRATEGY, attempts = N): the per-kind schedules with two kinds
// ---------------------------------------------------------------------------

/// `when`'s verdict for `throttled(..)`: a `Decision`.
fn decide(e: &ApiError) -> Decision {
    match e.0 {
        Transient => Decision::Retry,
        Throttled => Decision::Throttled,
        Permanent => Decision::Stop,
        RetryAfter(d) => Decision::RetryAfter(d),
    }
}

impl Client {
    /// Main: exponential from 100 ms, 3 attempts; throttled: exponential
    /// from 500 ms up to 30 s, 10 attempts.
    #[retry(exponential(base = "100ms", max = "5s"), attempts = 3, jitter = "none",
            throttled(exponential(base = "500ms", max = "30s"), attempts = 10),
            when = decide,
            on_retry = |_, event| self.heard(event),
            on_giveup = |_, report| *self.gave_up.borrow_mut() = Some(*report))]
    async fn two_kinds(&self) -> Result<u32, ApiError> {
        self.next()
    }

    /// Throttled: twice 1 s, then exponential from 2 s up to 1 min, 6
    /// attempts; main: 100 ms, 3 attempts.
    #[retry(constant("100ms"), attempts = 3, jitter = "none",
            throttled(chain(constant("1s", times = 2), exponential(base = "2s", max = "1m")), attempts = 6),
            when = decide,
            on_retry = |_, event| self.heard(event),
            on_giveup = |_, report| *self.gave_up.borrow_mut() = Some(*report))]
    async fn throttled_composed(&self) -> Result<u32, ApiError> {
        self.next()
    }

    fn kinds(&self) -> Vec<Option<&'static str>> {
        self.retries.borrow().iter().map(|r| r.1).collect()
    }
}

#[tokio::test(start_paused = true)]
async fn throttled_is_two_kinds_each_counting_its_own_failures() {
    const T: Option<&str> = Some("throttled");
    // Four throttled failures, then two transient ones: neither limit is
    // reached (the main one counts the transient failures alone), and the
    // first transient retry waits the main base.
    let client = Client::scripted(&[
        Throttled, Throttled, Throttled, Throttled, Transient, Transient,
    ]);
    let (result, took) = timed(client.two_kinds()).await;
    assert_eq!(result, Ok(7));
    assert_eq!(client.delays(), [500, 1000, 2000, 4000, 100, 200]);
    assert_eq!(took, MS(7800));
    assert_eq!(client.kinds(), [T, T, T, T, None, None]);

    // The third transient failure reaches the main limit.
    let client = Client::scripted(&[
        Throttled, Throttled, Throttled, Throttled, Transient, Transient, Transient,
    ]);
    let (result, took) = timed(client.two_kinds()).await;
    assert_eq!(result, Err(ApiError(Transient)));
    assert_eq!(took, MS(7800));
    let report = client.report();
    assert_eq!(
        (report.attempts, report.reason, report.failure_kind),
        (7, GiveUpReason::Attempts, None)
    );

    // Interleaved: each kind's k-th retry waits its own delay k.
    let client = Client::scripted(&[Transient, Throttled, Transient, Throttled]);
    let (result, took) = timed(client.two_kinds()).await;
    assert_eq!(result, Ok(7));
    assert_eq!(client.delays(), [100, 500, 200, 1000]);
    assert_eq!(took, MS(1800));
    assert_eq!(client.kinds(), [None, T, None, T]);

    // The tenth throttled failure ends the call, after a transient one:
    // 11 attempts.
    let mut script = vec![Transient];
    script.extend([Throttled; 10]);
    let client = Client::scripted(&script);
    let (result, took) = timed(client.two_kinds()).await;
    assert_eq!(result, Err(ApiError(Throttled)));
    assert_eq!(
        client.delays(),
        [
            100, 500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000
        ]
    );
    assert_eq!(took, MS(121_600));
    let report = client.report();
    assert_eq!(
        (report.attempts, report.reason, report.failure_kind),
        (11, GiveUpReason::Attempts, T)
    );
}

#[tokio::test(start_paused = true)]
async fn throttled_takes_a_composed_schedule_counting_its_own_failures() {
    // Throttled failures alone: 1 s, 1 s, then the exponential stage's
    // own first retries, 2 s, 4 s, 8 s; the sixth ends the call.
    let client = Client::scripted(&[Throttled; 7]);
    let (result, took) = timed(client.throttled_composed()).await;
    assert_eq!(result, Err(ApiError(Throttled)));
    assert_eq!(client.delays(), [1000, 1000, 2000, 4000, 8000]);
    assert_eq!(took, MS(16_000));
    let report = client.report();
    assert_eq!(
        (report.attempts, report.reason, report.failure_kind),
        (6, GiveUpReason::Attempts, Some("throttled"))
    );

    // Transient failures between them advance neither the throttled
    // schedule nor its count.
    let client = Client::scripted(&[
        Throttled, Transient, Throttled, Transient, Throttled, Throttled,
    ]);
    let (result, took) = timed(client.throttled_composed()).await;
    assert_eq!(result, Ok(7));
    assert_eq!(client.delays(), [1000, 100, 1000, 100, 2000, 4000]);
    assert_eq!(took, MS(8200));
}

/// `stop_at_delay` beside `on(..)` applies to every arm's own delay before
/// jitter: it becomes each arm's attempt count (the smaller of it and the
/// arm's `attempts`), so a server answering 503 again and again never sees
/// a wait that reaches it. `on_deadline = "last_try"` beside `max_elapsed`
/// bounds the whole call as it does without arms.
impl Client {
    #[retry(when = classify, jitter = "none", stop_at_delay = "250ms",
            on(Failure::Transient, exponential(base = "150ms", max = "5s")),
            on(Failure::Throttled, linear(base = "100ms", max = "1s"), attempts = 10),
            on(_, stop),
            on_retry = |_, event| self.heard(event),
            on_giveup = |_, report| *self.gave_up.borrow_mut() = Some(*report))]
    async fn stopped_at_delay(&self) -> Result<u32, ApiError> {
        self.next()
    }

    #[retry(when = classify, jitter = "none", max_elapsed = "1s", on_deadline = "last_try",
            on(Failure::Transient, constant("400ms"), attempts = unlimited),
            on(_, stop),
            on_retry = |_, event| self.heard(event))]
    async fn last_try_at_the_deadline(&self) -> Result<u32, ApiError> {
        self.next()
    }
}

#[tokio::test(start_paused = true)]
async fn stop_at_delay_applies_to_each_arm() {
    // Transient: 150 ms, then 300 ms would reach 250 ms: two attempts.
    let client = Client::scripted(&[Transient; 5]);
    let (result, took) = timed(client.stopped_at_delay()).await;
    assert_eq!(result, Err(ApiError(Transient)));
    assert_eq!(client.delays(), [150]);
    assert_eq!(took, MS(150));
    assert_eq!(client.report().reason, GiveUpReason::Attempts);

    // Throttled: 100, 200 ms, then 300 ms would reach it, before its own
    // `attempts = 10`: three throttled attempts.
    let client = Client::scripted(&[Throttled; 5]);
    let (result, took) = timed(client.stopped_at_delay()).await;
    assert_eq!(result, Err(ApiError(Throttled)));
    assert_eq!(client.delays(), [100, 200]);
    assert_eq!(took, MS(300));
}

#[tokio::test(start_paused = true)]
async fn on_deadline_applies_beside_the_arms() {
    // Attempts at 0, 400 and 800 ms; the next sleep would end past 1 s:
    // it is cut to end there, where one last try runs (and succeeds).
    let client = Client::scripted(&[Transient; 3]);
    let (result, took) = timed(client.last_try_at_the_deadline()).await;
    assert_eq!(result, Ok(7));
    assert_eq!(client.delays(), [400, 400, 200]);
    assert_eq!(took, MS(1000));
}
