//! `backoff_runtime::tower::RetryPolicy` in real tower stacks
//! (`ServiceBuilder`, `RetryLayer`, `TimeoutLayer`) over a scripted flaky
//! `service_fn`, on tokio's paused clock: the delays between calls are
//! exact, and so are the attempt counts.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backoff_runtime::tower::RetryPolicy;
use backoff_runtime::{Decision, Jitter, Policy, RetryBudget, retry};
use tokio::time::Instant;
use tower::retry::RetryLayer;
use tower::{BoxError, Service, ServiceBuilder, ServiceExt, service_fn};

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

// ---------------------------------------------------------------------------
// The flaky service
// ---------------------------------------------------------------------------

/// What the service fails with.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    /// A transient failure; the number of the call that failed (from 1).
    Refused(usize),
    /// A permanent one.
    BadRequest,
    /// Rate limited, with a hint.
    Throttled(Option<Duration>),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Fault {}

/// A response, with an HTTP-like status.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Response(u16);

/// One scripted outcome: `Err(Refused(0))` stands for "refused, numbered
/// with the call".
type Reply = Result<Response, Fault>;

const REFUSED: Reply = Err(Fault::Refused(0));
const OK: Reply = Ok(Response(200));
const UNAVAILABLE: Reply = Ok(Response(503));

/// The service's state: its script, the calls seen and when.
struct Script {
    replies: Vec<Reply>,
    then: Reply,
    /// How long each of the first calls takes to answer.
    latency: Vec<Duration>,
    calls: Mutex<Vec<Instant>>,
}

impl Script {
    fn new(replies: Vec<Reply>, then: Reply) -> Arc<Script> {
        Script::slow(replies, then, vec![])
    }

    fn slow(replies: Vec<Reply>, then: Reply, latency: Vec<Duration>) -> Arc<Script> {
        Arc::new(Script {
            replies,
            then,
            latency,
            calls: Mutex::new(Vec::new()),
        })
    }

    /// One call: the next reply, after its latency.
    async fn answer(&self) -> Reply {
        let n = {
            let mut calls = self.calls.lock().unwrap();
            calls.push(Instant::now());
            calls.len()
        };
        if let Some(&latency) = self.latency.get(n - 1) {
            tokio::time::sleep(latency).await;
        }
        match self.replies.get(n - 1).copied().unwrap_or(self.then) {
            Err(Fault::Refused(_)) => Err(Fault::Refused(n)),
            reply => reply,
        }
    }

    fn calls(&self) -> usize {
        self.calls.lock().unwrap().len()
    }

    /// The time between consecutive calls.
    fn gaps(&self) -> Vec<Duration> {
        let calls = self.calls.lock().unwrap();
        calls.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

/// A request; counts its copies.
#[derive(Debug, Default)]
struct Request {
    copies: Arc<AtomicUsize>,
}

impl Clone for Request {
    fn clone(&self) -> Self {
        self.copies.fetch_add(1, SeqCst);
        Request {
            copies: Arc::clone(&self.copies),
        }
    }
}

/// The flaky service: a `service_fn` answering from `script`.
fn flaky(
    script: &Arc<Script>,
) -> impl Service<Request, Response = Response, Error = Fault, Future: Send> + Clone + Send + use<>
{
    let script = Arc::clone(script);
    service_fn(move |_: Request| {
        let script = Arc::clone(&script);
        async move { script.answer().await }
    })
}

/// Sends one request through `service`.
async fn send<S>(service: &mut S) -> Result<S::Response, S::Error>
where
    S: Service<Request>,
{
    service.ready().await?.call(Request::default()).await
}

/// The usual `when`: refusals and throttling are transient.
fn transient(e: &Fault) -> Decision {
    match e {
        Fault::Refused(_) => Decision::Retry,
        Fault::Throttled(Some(d)) => Decision::RetryAfter(*d),
        Fault::Throttled(None) => Decision::Throttled,
        Fault::BadRequest => Decision::Stop,
    }
}

/// 100, 200, 400, 800 ms, 5 attempts.
static EXPONENTIAL: Policy = Policy::exponential(ms(100))
    .max_delay(secs(1))
    .jitter(Jitter::None)
    .attempts(5);

// ---------------------------------------------------------------------------
// Schedule and limits
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn delays_follow_the_policy_exactly() {
    let script = Script::new(vec![REFUSED, REFUSED, REFUSED], OK);
    let mut service = ServiceBuilder::new()
        .layer(RetryLayer::new(RetryPolicy::new(&EXPONENTIAL)))
        .service(flaky(&script));
    let start = Instant::now();
    assert_eq!(send(&mut service).await, Ok(Response(200)));
    assert_eq!(script.calls(), 4);
    assert_eq!(script.gaps(), [ms(100), ms(200), ms(400)]);
    assert_eq!(start.elapsed(), ms(700));
}

#[tokio::test(start_paused = true)]
async fn the_attempt_limit_returns_the_last_error() {
    let script = Script::new(vec![], REFUSED);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&EXPONENTIAL))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Err(Fault::Refused(5)));
    assert_eq!(script.gaps(), [ms(100), ms(200), ms(400), ms(800)]);
}

#[tokio::test(start_paused = true)]
async fn each_request_starts_a_fresh_count_and_schedule() {
    let script = Script::new(vec![], REFUSED);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&EXPONENTIAL))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Err(Fault::Refused(5)));
    assert_eq!(send(&mut service).await, Err(Fault::Refused(10)));
    let gaps = script.gaps();
    assert_eq!(gaps[..4], [ms(100), ms(200), ms(400), ms(800)]);
    assert_eq!(gaps[5..], [ms(100), ms(200), ms(400), ms(800)]);
}

#[tokio::test(start_paused = true)]
async fn concurrent_requests_on_spawned_tasks_keep_their_own_progress() {
    let script = Script::new(vec![], REFUSED);
    let service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&EXPONENTIAL).when(transient))
        .service(flaky(&script));
    // `tokio::spawn` needs the stack's future to be `Send + 'static`.
    let tasks: Vec<_> = (0..3)
        .map(|_| {
            let mut service = service.clone();
            tokio::spawn(async move { send(&mut service).await })
        })
        .collect();
    let start = Instant::now();
    for task in tasks {
        assert!(matches!(task.await.unwrap(), Err(Fault::Refused(_))));
    }
    assert_eq!(script.calls(), 3 * 5);
    assert_eq!(start.elapsed(), ms(100 + 200 + 400 + 800));
}

// ---------------------------------------------------------------------------
// `when` and `when_ok`
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn when_stop_returns_the_error_at_once() {
    let script = Script::new(vec![REFUSED, Err(Fault::BadRequest)], OK);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&EXPONENTIAL).when(transient))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Err(Fault::BadRequest));
    assert_eq!(script.calls(), 2);

    // A `bool` works too: `false` stops.
    let script = Script::new(vec![REFUSED, Err(Fault::BadRequest)], OK);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&EXPONENTIAL).when(|e: &Fault| matches!(e, Fault::Refused(_))))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Err(Fault::BadRequest));
    assert_eq!(script.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn when_ok_retries_a_503_response() {
    let script = Script::new(vec![UNAVAILABLE, REFUSED, UNAVAILABLE], OK);
    let mut service = ServiceBuilder::new()
        .retry(
            RetryPolicy::new(&EXPONENTIAL)
                .when(transient)
                .when_ok(|r: &Response| r.0 == 503),
        )
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Ok(Response(200)));
    // Responses and errors share one count and one schedule.
    assert_eq!(script.gaps(), [ms(100), ms(200), ms(400)]);
}

#[tokio::test(start_paused = true)]
async fn when_ok_giving_up_returns_the_last_response_unchanged() {
    let script = Script::new(vec![], UNAVAILABLE);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&EXPONENTIAL).when_ok(|r: &Response| r.0 >= 500))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Ok(Response(503)));
    assert_eq!(script.calls(), 5);
}

#[tokio::test(start_paused = true)]
async fn without_when_ok_every_response_is_accepted() {
    let script = Script::new(vec![], UNAVAILABLE);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&EXPONENTIAL))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Ok(Response(503)));
    assert_eq!(script.calls(), 1);
}

// ---------------------------------------------------------------------------
// A server's word, throttling, deadlines
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn retry_after_is_waited_exactly_beyond_the_strategy_max() {
    let hint = Err(Fault::Throttled(Some(secs(7))));
    let script = Script::new(vec![hint, REFUSED, hint], OK);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&EXPONENTIAL).when(transient))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Ok(Response(200)));
    // The hint does not advance the backoff: 7 s, 100 ms, 7 s.
    assert_eq!(script.gaps(), [secs(7), ms(100), secs(7)]);
}

#[tokio::test(start_paused = true)]
async fn retry_after_beyond_retry_after_max_gives_up_at_once() {
    // The default bound: five minutes.
    let script = Script::new(vec![], Err(Fault::Throttled(Some(secs(301)))));
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&EXPONENTIAL).when(transient))
        .service(flaky(&script));
    let start = Instant::now();
    assert_eq!(
        send(&mut service).await,
        Err(Fault::Throttled(Some(secs(301))))
    );
    assert_eq!((script.calls(), start.elapsed()), (1, Duration::ZERO));

    // A bound set on the policy.
    static BOUNDED: Policy = Policy::immediate().attempts(5).retry_after_max(secs(30));
    let script = Script::new(
        vec![Err(Fault::Throttled(Some(secs(30))))],
        Err(Fault::Throttled(Some(secs(31)))),
    );
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&BOUNDED).when(transient))
        .service(flaky(&script));
    let start = Instant::now();
    assert!(send(&mut service).await.is_err());
    assert_eq!((script.calls(), start.elapsed()), (2, secs(30)));
}

#[tokio::test(start_paused = true)]
async fn throttled_errors_follow_the_throttled_schedule_and_limit() {
    static ADAPTIVE: Policy = Policy::exponential(ms(100))
        .jitter(Jitter::None)
        .attempts(2)
        .throttled(Policy::constant(secs(5)).jitter(Jitter::None).attempts(4));
    let script = Script::new(vec![], Err(Fault::Throttled(None)));
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&ADAPTIVE).when(transient))
        .service(flaky(&script));
    assert!(send(&mut service).await.is_err());
    assert_eq!(script.gaps(), [secs(5), secs(5), secs(5)]);

    // Ordinary errors keep the main schedule and its limit of 2.
    let script = Script::new(vec![], REFUSED);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&ADAPTIVE).when(transient))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Err(Fault::Refused(2)));
    assert_eq!(script.gaps(), [ms(100)]);
}

#[tokio::test(start_paused = true)]
async fn max_elapsed_runs_from_the_start_of_the_request() {
    static DEADLINE: Policy = Policy::constant(ms(400))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(secs(1));
    // Instant failures at 0, 400 and 800 ms; a sleep to 1200 would cross
    // the deadline.
    let script = Script::new(vec![], REFUSED);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&DEADLINE))
        .service(flaky(&script));
    let start = Instant::now();
    assert_eq!(send(&mut service).await, Err(Fault::Refused(3)));
    assert_eq!(start.elapsed(), ms(800));

    // A first attempt that takes 700 ms leaves no room for a 400 ms sleep:
    // the deadline counts the time spent in the attempt, not only since it
    // failed.
    let script = Script::slow(vec![], REFUSED, vec![ms(700)]);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&DEADLINE))
        .service(flaky(&script));
    let start = Instant::now();
    assert_eq!(send(&mut service).await, Err(Fault::Refused(1)));
    assert_eq!(start.elapsed(), ms(700));
}

// ---------------------------------------------------------------------------
// Budget
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn an_empty_budget_stops_retries_across_requests_and_successes_refill_it() {
    static BUDGET: RetryBudget = RetryBudget::new(2, 0.5);
    let script = Script::new(
        vec![
            REFUSED, REFUSED, REFUSED, // request 1: two retries, the budget is empty
            REFUSED, // request 2: no retry
            OK,      // request 3: half a token back
            OK,      // request 4: a whole token
            REFUSED, REFUSED, // request 5: one retry
        ],
        REFUSED,
    );
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&EXPONENTIAL).budget(&BUDGET))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Err(Fault::Refused(3)));
    assert_eq!(BUDGET.tokens(), 0.0);
    assert_eq!(send(&mut service).await, Err(Fault::Refused(4)));
    assert_eq!(send(&mut service).await, Ok(Response(200)));
    assert_eq!(BUDGET.tokens(), 0.5);
    assert_eq!(send(&mut service).await, Ok(Response(200)));
    assert_eq!(send(&mut service).await, Err(Fault::Refused(8)));
    assert_eq!(script.calls(), 8);
    assert_eq!(BUDGET.tokens(), 0.0);
}

#[tokio::test(start_paused = true)]
async fn a_success_on_the_last_attempt_refills_the_budget() {
    static BUDGET: RetryBudget = RetryBudget::new(10, 1.0);
    static THREE: Policy = Policy::immediate().attempts(3);
    let script = Script::new(vec![REFUSED, REFUSED], OK);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&THREE).budget(&BUDGET))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Ok(Response(200)));
    assert_eq!(script.calls(), 3);
    assert_eq!(BUDGET.tokens(), 10.0 - 2.0 + 1.0);
}

#[tokio::test(start_paused = true)]
async fn a_budget_shared_with_a_retry_function() {
    static BUDGET: RetryBudget = RetryBudget::new(3, 0.0);
    static FAST: Policy = Policy::immediate().attempts(10);

    #[retry(policy = &FAST, budget = BUDGET)]
    async fn always_down() -> Result<(), Fault> {
        Err(Fault::Refused(0))
    }

    assert!(always_down().await.is_err()); // spends the three tokens
    let script = Script::new(vec![], REFUSED);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&FAST).budget(&BUDGET))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Err(Fault::Refused(1)));
}

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn requests_are_copied_for_retries_only() {
    static THREE: Policy = Policy::immediate().attempts(3);
    static ONCE: Policy = Policy::immediate().attempts(1);

    let copies = |policy: &'static Policy, replies: Vec<Reply>| async move {
        let script = Script::new(replies, REFUSED);
        let mut service = ServiceBuilder::new()
            .retry(RetryPolicy::new(policy))
            .service(flaky(&script));
        let request = Request::default();
        let copies = Arc::clone(&request.copies);
        let _ = service.ready().await.unwrap().call(request).await;
        (script.calls(), copies.load(SeqCst))
    };
    // Three attempts: a copy for the second and the third; none follows the
    // third.
    assert_eq!(copies(&THREE, vec![]).await, (3, 2));
    // A success on the first attempt used the one copy made ahead.
    assert_eq!(copies(&THREE, vec![OK]).await, (1, 1));
    // One attempt: nothing to copy.
    assert_eq!(copies(&ONCE, vec![]).await, (1, 0));
}

#[tokio::test(start_paused = true)]
async fn a_request_that_cannot_be_copied_is_sent_once() {
    /// Not `Clone`: its body may be a stream.
    struct Upload {
        replayable: bool,
    }
    impl Upload {
        fn try_clone(&self) -> Option<Upload> {
            self.replayable.then_some(Upload { replayable: true })
        }
    }

    let script = Script::new(vec![], REFUSED);
    let script_in = Arc::clone(&script);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&EXPONENTIAL).clone_request_with(Upload::try_clone))
        .service(service_fn(move |_: Upload| {
            let script = Arc::clone(&script_in);
            async move { script.answer().await }
        }));
    let upload = |replayable| Upload { replayable };
    let one_shot = service.ready().await.unwrap().call(upload(false)).await;
    assert_eq!((one_shot, script.calls()), (Err(Fault::Refused(1)), 1));
    let replayable = service.ready().await.unwrap().call(upload(true)).await;
    assert_eq!((replayable, script.calls()), (Err(Fault::Refused(6)), 6));
}

// ---------------------------------------------------------------------------
// Stacks
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn retry_around_a_timeout_bounds_each_attempt() {
    // The first attempt hangs for a minute; the timeout layer cancels it
    // after a second, and the retry layer retries the timeout (a
    // `BoxError`, as tower's layers return).
    static POLICY: Policy = Policy::constant(ms(250)).jitter(Jitter::None).attempts(3);
    let script = Script::slow(vec![], OK, vec![secs(60)]);
    let mut service = ServiceBuilder::new()
        .retry(
            RetryPolicy::new(&POLICY).when(|e: &BoxError| e.is::<tower::timeout::error::Elapsed>()),
        )
        .timeout(secs(1))
        .service(flaky(&script));
    let start = Instant::now();
    assert_eq!(send(&mut service).await.unwrap(), Response(200));
    assert_eq!(script.calls(), 2);
    assert_eq!(start.elapsed(), secs(1) + ms(250));
}

/// The policy of the next test, for a `#[retry]` function and a tower stack.
static SHARED: Policy = Policy::fibonacci(ms(100)).jitter(Jitter::None).attempts(6);

/// The attribute's side: the same script, called directly.
#[retry(policy = &SHARED, when = transient)]
async fn call_directly(script: &Script) -> Result<Response, Fault> {
    script.answer().await
}

#[tokio::test(start_paused = true)]
async fn one_static_policy_serves_the_attribute_and_the_tower_layer() {
    let replies = vec![
        REFUSED,
        REFUSED,
        Err(Fault::Throttled(Some(secs(3)))),
        REFUSED,
    ];
    let direct = Script::new(replies.clone(), OK);
    let stacked = Script::new(replies, OK);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&SHARED).when(transient))
        .service(flaky(&stacked));

    assert_eq!(call_directly(&direct).await, Ok(Response(200)));
    assert_eq!(send(&mut service).await, Ok(Response(200)));
    let expected = [ms(100), ms(100), secs(3), ms(200)];
    assert_eq!(direct.gaps(), expected);
    assert_eq!(stacked.gaps(), expected);

    // And both give up after the same 6 calls with the same error.
    let direct = Script::new(vec![], REFUSED);
    let stacked = Script::new(vec![], REFUSED);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&SHARED).when(transient))
        .service(flaky(&stacked));
    assert_eq!(call_directly(&direct).await, Err(Fault::Refused(6)));
    assert_eq!(send(&mut service).await, Err(Fault::Refused(6)));
    assert_eq!(direct.gaps(), stacked.gaps());
}

#[tokio::test(start_paused = true)]
async fn jittered_delays_stay_within_the_strategy_cap() {
    static JITTERED: Policy = Policy::exponential(ms(100))
        .max_delay(ms(300))
        .jitter(Jitter::Full)
        .attempts(8);
    let script = Script::new(vec![], REFUSED);
    let mut service = ServiceBuilder::new()
        .retry(RetryPolicy::new(&JITTERED))
        .service(flaky(&script));
    assert_eq!(send(&mut service).await, Err(Fault::Refused(8)));
    let gaps = script.gaps();
    assert_eq!(gaps.len(), 7);
    assert!(gaps.iter().all(|d| *d <= ms(300)), "{gaps:?}");
}
