//! `#[retry]` beside the attributes its users already write: `#[tokio::main]`
//! and `#[tokio::test]`, `#[tracing::instrument]`, and `#[async_trait]`, in
//! either order, with the `tracing` feature's events captured and checked.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backoff_runtime::retry;
use backoff_workspace_tests::block_on_paused;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// A failure that displays as `down #n`.
#[derive(Debug, PartialEq)]
struct Down(u32);

impl std::fmt::Display for Down {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "down #{}", self.0)
    }
}

// ---- #[tokio::test] and #[tokio::main], both orders ---------------------

static TEST_ABOVE: AtomicU32 = AtomicU32::new(0);

/// `#[retry]` sees the async fn first, so the test body itself is retried
/// with tokio's sleep; the test passes on its third attempt.
#[retry(constant("1s"), attempts = 3, jitter = "none")]
#[tokio::test(start_paused = true)]
async fn retry_above_tokio_test_retries_the_test_body() -> Result<(), Down> {
    let n = TEST_ABOVE.fetch_add(1, Ordering::SeqCst) + 1;
    if n < 3 { Err(Down(n)) } else { Ok(()) }
}

static TEST_BELOW: AtomicU32 = AtomicU32::new(0);

/// `#[tokio::test]` runs first and leaves a plain fn that blocks on the
/// body; `#[retry]` then retries that whole fn, a fresh runtime each time.
#[tokio::test]
#[retry(immediate, attempts = 3)]
async fn retry_below_tokio_test_retries_the_blocking_test() -> Result<(), Down> {
    let n = TEST_BELOW.fetch_add(1, Ordering::SeqCst) + 1;
    if n < 3 { Err(Down(n)) } else { Ok(()) }
}

mod main_above {
    use super::*;
    pub(super) static CALLS: AtomicU32 = AtomicU32::new(0);

    #[retry(immediate, attempts = 2)]
    #[tokio::main(flavor = "current_thread")]
    pub(super) async fn main() -> Result<u32, Down> {
        let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        if n < 2 { Err(Down(n)) } else { Ok(n) }
    }
}

mod main_below {
    use super::*;
    pub(super) static CALLS: AtomicU32 = AtomicU32::new(0);

    #[tokio::main(flavor = "current_thread")]
    #[retry(immediate, attempts = 2)]
    pub(super) async fn main() -> Result<u32, Down> {
        let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        if n < 2 { Err(Down(n)) } else { Ok(n) }
    }
}

#[test]
fn retry_with_tokio_main_in_either_order() {
    assert_eq!(main_above::main(), Ok(2));
    assert_eq!(main_above::CALLS.load(Ordering::SeqCst), 2);
    assert_eq!(main_below::main(), Ok(2));
    assert_eq!(main_below::CALLS.load(Ordering::SeqCst), 2);
}

// ---- tracing: events, under #[tracing::instrument] in either order ------

/// One captured event: its level, its message, and its fields as text.
#[derive(Debug, Clone)]
struct Captured {
    level: Level,
    span: Option<String>,
    fields: Vec<(String, String)>,
}

impl Captured {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

struct Fields(Vec<(String, String)>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.push((field.name().to_owned(), value.to_string()));
    }
}

impl<S> Layer<S> for Capture
where
    S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if event.metadata().target() != "backoff_runtime" {
            return;
        }
        let mut fields = Fields(Vec::new());
        event.record(&mut fields);
        let span = ctx.event_span(event).map(|s| s.name().to_owned());
        self.0.lock().unwrap().push(Captured {
            level: *event.metadata().level(),
            span,
            fields: fields.0,
        });
    }
}

/// Runs `f` with a subscriber capturing this crate's events.
fn capture<T>(f: impl FnOnce() -> T) -> (T, Vec<Captured>) {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let out = tracing::subscriber::with_default(subscriber, f);
    let events = capture.0.lock().unwrap().clone();
    (out, events)
}

#[retry(exponential(base = "10ms"), attempts = 3, jitter = "none", sleep = no_sleep)]
fn always_down(id: u32) -> Result<(), Down> {
    Err(Down(id))
}

fn no_sleep(_: Duration) {}

#[test]
fn tracing_reports_each_retry_at_warn_and_giving_up_at_error() {
    let (result, events) = capture(|| always_down(7));
    assert_eq!(result, Err(Down(7)));
    let levels: Vec<Level> = events.iter().map(|e| e.level).collect();
    assert_eq!(levels, [Level::WARN, Level::WARN, Level::ERROR]);
    let first = &events[0];
    assert_eq!(first.field("function"), Some("always_down"));
    assert_eq!(first.field("attempt"), Some("1"));
    assert_eq!(first.field("delay_ms"), Some("10"));
    assert_eq!(first.field("error"), Some("down #7"));
    assert_eq!(events[1].field("delay_ms"), Some("20"));
    assert_eq!(events[2].field("attempts"), Some("3"));
    assert_eq!(events[2].field("reason"), Some("attempts"));
    assert_eq!(events[2].field("error"), Some("down #7"));
}

/// A permanent error on the first attempt is an answer, not a failed
/// retry: DEBUG, not ERROR. Stopped after retries is a WARN; a breaker's
/// refusal too.
#[test]
fn tracing_give_up_levels_follow_the_reason() {
    #[retry(immediate, attempts = 3, when = |e: &Down| e.0 < 2)]
    fn permanent(first: u32) -> Result<(), Down> {
        static N: AtomicU32 = AtomicU32::new(0);
        Err(Down(first + N.fetch_add(1, Ordering::SeqCst)))
    }
    let (_, events) = capture(|| permanent(5));
    let levels: Vec<Level> = events.iter().map(|e| e.level).collect();
    assert_eq!(levels, [Level::DEBUG]);
    assert_eq!(events[0].field("reason"), Some("stopped"));
    assert_eq!(events[0].field("attempts"), Some("1"));

    #[retry(immediate, attempts = 5, when = |e: &Down| e.0 < 12)]
    fn stops_later() -> Result<(), Down> {
        static N: AtomicU32 = AtomicU32::new(10);
        Err(Down(N.fetch_add(1, Ordering::SeqCst)))
    }
    let (_, events) = capture(stops_later);
    let levels: Vec<Level> = events.iter().map(|e| e.level).collect();
    assert_eq!(levels, [Level::WARN, Level::WARN, Level::WARN]);
    assert_eq!(events[2].field("reason"), Some("stopped"));
    assert_eq!(events[2].field("attempts"), Some("3"));
}

#[test]
fn tracing_is_silent_when_the_first_attempt_succeeds() {
    #[retry]
    fn fine() -> Result<u8, Down> {
        Ok(1)
    }
    let (result, events) = capture(fine);
    assert_eq!(result, Ok(1));
    assert!(events.is_empty(), "{events:?}");
}

/// An error without `Display` still compiles with the `tracing` feature on,
/// and is reported by a placeholder.
#[test]
fn tracing_accepts_errors_without_display() {
    #[derive(Debug)]
    struct Opaque;

    #[retry(immediate, attempts = 2)]
    fn opaque() -> Result<(), Opaque> {
        Err(Opaque)
    }
    let (_, events) = capture(opaque);
    assert_eq!(events.len(), 2);
    assert_eq!(
        events[0].field("error"),
        Some("(an error without `Display`)")
    );
}

static RETRY_OUTSIDE: AtomicU32 = AtomicU32::new(0);

/// `#[retry]` above `#[tracing::instrument]`: `#[retry]` expands first, so
/// instrument wraps the whole retry loop in one span, and the retry events
/// carry it. Owned arguments work: the attempts borrow them.
#[retry(immediate, attempts = 3)]
#[tracing::instrument]
async fn retry_outside_instrument(name: String) -> Result<usize, Down> {
    let n = RETRY_OUTSIDE.fetch_add(1, Ordering::SeqCst) + 1;
    if n < 3 { Err(Down(n)) } else { Ok(name.len()) }
}

static INSTRUMENT_OUTSIDE: AtomicU32 = AtomicU32::new(0);

/// `#[tracing::instrument]` above `#[retry]`: instrument expands first, so
/// each attempt runs in a span of its own and the retry events come between
/// them. Instrument moves the arguments into each attempt's future, so in
/// this order by-value arguments must be `Copy` (or borrowed); put
/// `#[retry]` first to retry with owned ones.
#[tracing::instrument]
#[retry(immediate, attempts = 3)]
async fn instrument_outside_retry(name: &'static str) -> Result<usize, Down> {
    let n = INSTRUMENT_OUTSIDE.fetch_add(1, Ordering::SeqCst) + 1;
    if n < 3 { Err(Down(n)) } else { Ok(name.len()) }
}

#[test]
fn retry_works_under_tracing_instrument_in_either_order() {
    let (result, events) = capture(|| block_on_paused(retry_outside_instrument("abc".to_owned())));
    assert_eq!(result, Ok(3));
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        events.iter().all(
            |e| e.level == Level::WARN && e.span.as_deref() == Some("retry_outside_instrument")
        ),
        "{events:?}"
    );

    let (result, events) = capture(|| block_on_paused(instrument_outside_retry("abcd")));
    assert_eq!(result, Ok(4));
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        events
            .iter()
            .all(|e| e.field("function") == Some("instrument_outside_retry")),
        "{events:?}"
    );
}

// ---- #[async_trait] ------------------------------------------------------

#[async_trait::async_trait]
trait Service {
    async fn call(&self, id: String) -> Result<String, Down>;

    #[retry(constant("1s"), attempts = 3, jitter = "none")]
    async fn ping(&self) -> Result<u32, Down> {
        let n = self.bump();
        if n < 2 { Err(Down(n)) } else { Ok(n) }
    }

    fn bump(&self) -> u32;
}

struct Flaky {
    calls: AtomicU32,
}

#[async_trait::async_trait]
impl Service for Flaky {
    #[retry(constant("10ms"), attempts = 4, jitter = "none")]
    async fn call(&self, id: String) -> Result<String, Down> {
        let n = self.bump();
        if n < 3 {
            Err(Down(n))
        } else {
            Ok(format!("{id} after {n}"))
        }
    }

    fn bump(&self) -> u32 {
        self.calls.fetch_add(1, Ordering::SeqCst) + 1
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_inside_async_trait_impls_retries_and_stays_send() {
    let service: Arc<dyn Service + Send + Sync> = Arc::new(Flaky {
        calls: AtomicU32::new(0),
    });
    let spawned = tokio::spawn({
        let service = Arc::clone(&service);
        async move { service.call("job".to_owned()).await }
    });
    assert_eq!(spawned.await.unwrap(), Ok("job after 3".to_owned()));
}

#[tokio::test(start_paused = true)]
async fn retry_on_async_trait_default_methods_sleeps_its_schedule() {
    let service = Flaky {
        calls: AtomicU32::new(0),
    };
    let start = tokio::time::Instant::now();
    assert_eq!(service.ping().await, Ok(2));
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

/// Regression (found on axum's `from_request_parts` in the corpus run):
/// with `tracing` on, the trace of an `async fn`'s failed attempt borrows
/// the attempt's outcome, which must not leave that outcome held across
/// the sleep. The future is `Send` when the value it returns is not: an
/// `Rc` is returned, never kept across an await.
#[retry(constant("10ms"), attempts = 3, jitter = "none")]
async fn returns_a_value_that_is_not_send() -> Result<std::rc::Rc<u32>, Down> {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if n < 2 {
        return Err(Down(n));
    }
    Ok(std::rc::Rc::new(n))
}

#[test]
fn a_traced_async_fn_stays_send_when_its_outcome_is_not() {
    fn send<F: std::future::Future + Send>(future: F) -> F {
        future
    }
    let (result, events) = capture(|| block_on_paused(send(returns_a_value_that_is_not_send())));
    assert_eq!(result.map(|n| *n), Ok(2));
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        events[0].field("function"),
        Some("returns_a_value_that_is_not_send")
    );
}

thread_local! {
    /// Errors of `fails_with_an_error_that_is_not_send` not yet dropped.
    static LIVE_ERRORS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// Sleeps, and those that found one of those errors alive.
    static SLEPT: std::cell::Cell<(u32, u32)> = const { std::cell::Cell::new((0, 0)) };
}

/// An error that is not `Send` and counts itself alive.
#[derive(Debug)]
struct Held(#[allow(dead_code)] std::rc::Rc<()>);

impl Held {
    fn new() -> Held {
        LIVE_ERRORS.set(LIVE_ERRORS.get() + 1);
        Held(std::rc::Rc::new(()))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        LIVE_ERRORS.set(LIVE_ERRORS.get() - 1);
    }
}

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("held")
    }
}

async fn sleep_noting_live_errors(_: Duration) {
    let (sleeps, with_error) = SLEPT.get();
    SLEPT.set((sleeps + 1, with_error + u32::from(LIVE_ERRORS.get() > 0)));
}

/// Fails twice, then succeeds.
#[retry(constant("10ms"), attempts = 3, jitter = "none", sleep = sleep_noting_live_errors)]
async fn fails_with_an_error_that_is_not_send() -> Result<u32, Held> {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if n < 3 {
        return Err(Held::new());
    }
    Ok(n)
}

/// An `async fn`'s attempt error is dropped before the sleep, traced or
/// not: no sleep finds it alive, and the future is `Send` with an error
/// that is not.
#[test]
fn an_async_fns_error_is_dropped_before_the_sleep() {
    fn send<F: std::future::Future + Send>(future: F) -> F {
        future
    }
    let (result, events) =
        capture(|| block_on_paused(send(fails_with_an_error_that_is_not_send())));
    assert_eq!(result.map_err(|_| ()), Ok(3));
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(SLEPT.get(), (2, 0), "(sleeps, sleeps with the error alive)");
    assert_eq!(LIVE_ERRORS.get(), 0);
}

/// A hedged `#[retry]` function traces like the others: a WARN for the
/// retry a failure started, an ERROR when every attempt failed.
#[test]
fn a_hedged_fn_traces_its_retries_and_giving_up() {
    #[retry(hedge = "1h", attempts = 2)]
    async fn hedged(id: u32) -> Result<(), Down> {
        Err(Down(id))
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let (result, events) = capture(|| rt.block_on(hedged(3)));
    assert_eq!(result, Err(Down(3)));
    let levels: Vec<Level> = events.iter().map(|e| e.level).collect();
    assert_eq!(levels, [Level::WARN, Level::ERROR]);
    assert_eq!(events[0].field("function"), Some("hedged"));
    assert_eq!(events[1].field("reason"), Some("attempts"));
    assert_eq!(events[1].field("error"), Some("down #3"));
}

/// With a schedule per kind (`on(..)`), each retry event and the give-up
/// event name the failure's kind, the text of its arm's pattern; without
/// kinds, the field is absent.
#[test]
fn tracing_give_up_names_the_failure_kind() {
    #[derive(Clone, Copy)]
    enum Kind {
        Busy,
        Gone,
    }
    #[retry(when = |e: &Down| if e.0 < 3 { Kind::Busy } else { Kind::Gone },
            on(Kind::Busy, immediate, attempts = 5),
            on(Kind::Gone, stop))]
    fn classified() -> Result<(), Down> {
        static N: AtomicU32 = AtomicU32::new(0);
        Err(Down(N.fetch_add(1, Ordering::SeqCst)))
    }
    let (_, events) = capture(classified);
    // Three retries of `Kind::Busy`, each event naming it.
    let retries: Vec<_> = events
        .iter()
        .filter(|e| e.field("delay_ms").is_some())
        .collect();
    assert_eq!(retries.len(), 3);
    assert!(
        retries
            .iter()
            .all(|e| e.field("failure_kind") == Some("Kind::Busy"))
    );
    let last = events.last().expect("a give-up event");
    assert_eq!(last.field("reason"), Some("stopped"));
    assert_eq!(last.field("attempts"), Some("4"));
    assert_eq!(last.field("failure_kind"), Some("Kind::Gone"));
    let (_, events) = capture(|| always_down(1));
    assert_eq!(events.last().unwrap().field("failure_kind"), None);
}
