//! Integration tests of the shapes of function `#[retry]` rewrites, as
//! SPEC.md's "What the rewrite guarantees" lists them: free functions,
//! `&self`, `&mut self` and `self: Arc<Self>` methods, trait impl methods,
//! trait methods with a default body, `async fn` in traits, generic
//! functions with where-clauses, `impl Trait` arguments, `Result` aliases,
//! attributes, doc comments and visibility, borrowed return data; and that
//! an `async fn`'s future stays `Send` and cancels cleanly when dropped.
//!
//! Each shape is called, not just compiled: it must retry and return what
//! SPEC.md says. Async tests run on tokio's paused clock, so the virtual
//! elapsed time of a call is exact.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::retry;
use backoff_workspace_tests::Flaky;
use tokio::time::Instant;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Compile-time check that a value is `Send`.
fn assert_send<T: Send>(_: &T) {}

// ---------------------------------------------------------------------------
// Free functions
// ---------------------------------------------------------------------------

#[retry(immediate, attempts = 5)]
fn free(service: &Flaky) -> Result<u32, u32> {
    service.call()
}

#[retry(constant("1s"), attempts = 4, jitter = "none")]
async fn free_async(service: &Flaky) -> Result<u32, u32> {
    service.call()
}

#[test]
fn free_fn_keeps_its_signature_and_retries() {
    let as_pointer: fn(&Flaky) -> Result<u32, u32> = free;
    let service = Flaky::new(2);
    assert_eq!(as_pointer(&service), Ok(3));
    assert_eq!(service.calls(), 3);
    let hopeless = Flaky::new(100);
    assert_eq!(free(&hopeless), Err(5));
    assert_eq!(hopeless.calls(), 5);
}

#[tokio::test(start_paused = true)]
async fn async_free_fn_that_always_fails_takes_exactly_its_sleeps() {
    let service = Flaky::new(100);
    let start = Instant::now();
    assert_eq!(free_async(&service).await, Err(4));
    assert_eq!(start.elapsed(), secs(3));
    assert_eq!(service.calls(), 4);
}

#[tokio::test(start_paused = true)]
async fn async_free_fn_that_recovers_returns_the_success() {
    let service = Flaky::new(2);
    let start = Instant::now();
    assert_eq!(free_async(&service).await, Ok(3));
    assert_eq!(start.elapsed(), secs(2));
}

// ---------------------------------------------------------------------------
// Inherent methods: &self, &mut self, self: Arc<Self>
// ---------------------------------------------------------------------------

#[derive(Debug)]
struct Service {
    flaky: Flaky,
    name: String,
}

impl Service {
    fn new(failures: u32) -> Self {
        Service {
            flaky: Flaky::new(failures),
            name: "svc".to_owned(),
        }
    }

    #[retry(immediate, attempts = 4)]
    fn by_ref(&self) -> Result<u32, u32> {
        self.flaky.call()
    }

    #[retry(linear(base = "1s"), attempts = 4, jitter = "none")]
    async fn by_ref_async(&self) -> Result<u32, u32> {
        self.flaky.call()
    }

    #[retry(immediate, attempts = 4)]
    fn by_arc(self: Arc<Self>) -> Result<u32, u32> {
        self.flaky.call()
    }

    #[retry(constant("500ms"), attempts = 4, jitter = "none")]
    async fn by_arc_async(self: Arc<Self>) -> Result<u32, u32> {
        self.flaky.call()
    }

    /// Borrowed data out of `&self`.
    #[retry(immediate, attempts = 3)]
    fn name(&self) -> Result<&str, u32> {
        self.flaky.call().map(|_| self.name.as_str())
    }

    #[retry(constant("1s"), attempts = 3, jitter = "none")]
    async fn name_async(&self) -> Result<&str, u32> {
        self.flaky.call().map(|_| self.name.as_str())
    }
}

#[test]
fn ref_self_method_retries_on_the_same_receiver() {
    let service = Service::new(2);
    assert_eq!(service.by_ref(), Ok(3));
    assert_eq!(service.flaky.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn async_ref_self_method_retries_on_virtual_time() {
    let service = Service::new(10);
    let start = Instant::now();
    assert_eq!(service.by_ref_async().await, Err(4));
    assert_eq!(start.elapsed(), secs(1 + 2 + 3));
}

#[test]
fn arc_self_method_retries() {
    let service = Arc::new(Service::new(1));
    assert_eq!(Arc::clone(&service).by_arc(), Ok(2));
    assert_eq!(service.flaky.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn async_arc_self_method_retries_on_virtual_time() {
    let service = Arc::new(Service::new(3));
    let start = Instant::now();
    assert_eq!(Arc::clone(&service).by_arc_async().await, Ok(4));
    assert_eq!(start.elapsed(), ms(1500));
}

#[test]
fn method_returns_data_borrowed_from_self() {
    let service = Service::new(2);
    let name: &str = service.name().unwrap();
    assert_eq!(name, "svc");
    assert!(std::ptr::eq(name, service.name.as_str()));
    assert_eq!(service.flaky.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn async_method_returns_data_borrowed_from_self() {
    let service = Service::new(1);
    let start = Instant::now();
    assert_eq!(service.name_async().await, Ok("svc"));
    assert_eq!(start.elapsed(), secs(1));
}

/// Each attempt sees what the previous attempts did to `self`.
#[derive(Debug, Default)]
struct Accumulator {
    seen: Vec<usize>,
}

impl Accumulator {
    #[retry(immediate, attempts = 5)]
    fn push(&mut self) -> Result<usize, usize> {
        self.seen.push(self.seen.len());
        if self.seen.len() < 3 {
            Err(self.seen.len())
        } else {
            Ok(self.seen.len())
        }
    }

    #[retry(constant("1s"), attempts = 5, jitter = "none")]
    async fn push_async(&mut self) -> Result<usize, usize> {
        self.seen.push(self.seen.len());
        if self.seen.len() < 4 {
            Err(self.seen.len())
        } else {
            Ok(self.seen.len())
        }
    }
}

#[test]
fn mut_self_method_mutates_the_receiver_across_attempts() {
    let mut acc = Accumulator::default();
    assert_eq!(acc.push(), Ok(3));
    assert_eq!(acc.seen, [0, 1, 2]);
}

#[tokio::test(start_paused = true)]
async fn async_mut_self_method_mutates_the_receiver_across_attempts() {
    let mut acc = Accumulator::default();
    let start = Instant::now();
    assert_eq!(acc.push_async().await, Ok(4));
    assert_eq!(acc.seen, [0, 1, 2, 3]);
    assert_eq!(start.elapsed(), secs(3));
}

// ---------------------------------------------------------------------------
// Traits
// ---------------------------------------------------------------------------

trait Fetch {
    fn fetch(&self) -> Result<u32, u32>;
}

impl Fetch for Service {
    #[retry(immediate, attempts = 3)]
    fn fetch(&self) -> Result<u32, u32> {
        self.flaky.call()
    }
}

#[test]
fn trait_impl_method_retries_also_through_dyn() {
    let service = Service::new(1);
    let dynamic: &dyn Fetch = &service;
    assert_eq!(dynamic.fetch(), Ok(2));
    let hopeless = Service::new(10);
    assert_eq!(Fetch::fetch(&hopeless), Err(3));
}

trait WithDefault {
    fn flaky(&self) -> &Flaky;

    /// A default body under `#[retry]`.
    #[retry(immediate, attempts = 4)]
    fn fetch_with_retries(&self) -> Result<u32, u32> {
        self.flaky().call()
    }
}

struct UsesDefault(Flaky);

impl WithDefault for UsesDefault {
    fn flaky(&self) -> &Flaky {
        &self.0
    }
}

struct Overrides(Flaky);

impl WithDefault for Overrides {
    fn flaky(&self) -> &Flaky {
        &self.0
    }

    fn fetch_with_retries(&self) -> Result<u32, u32> {
        self.0.call()
    }
}

#[test]
fn trait_default_body_retries_unless_overridden() {
    let default = UsesDefault(Flaky::new(3));
    assert_eq!(default.fetch_with_retries(), Ok(4));
    assert_eq!(default.0.calls(), 4);
    let overridden = Overrides(Flaky::new(3));
    assert_eq!(overridden.fetch_with_retries(), Err(1));
    assert_eq!(overridden.0.calls(), 1);
}

trait AsyncFetch {
    fn flaky(&self) -> &Flaky;

    async fn fetch(&self) -> Result<u32, u32>;

    #[retry(constant("2s"), attempts = 3, jitter = "none")]
    async fn fetch_default(&self) -> Result<u32, u32> {
        self.flaky().call()
    }
}

impl AsyncFetch for Service {
    fn flaky(&self) -> &Flaky {
        &self.flaky
    }

    #[retry(exponential(base = "1s"), attempts = 4, jitter = "none")]
    async fn fetch(&self) -> Result<u32, u32> {
        self.flaky.call()
    }
}

#[tokio::test(start_paused = true)]
async fn async_fn_in_trait_impl_retries_on_virtual_time() {
    let service = Service::new(10);
    let start = Instant::now();
    assert_eq!(AsyncFetch::fetch(&service).await, Err(4));
    assert_eq!(start.elapsed(), secs(1 + 2 + 4));
}

#[tokio::test(start_paused = true)]
async fn async_fn_in_trait_with_a_default_body_retries_on_virtual_time() {
    let service = Service::new(1);
    let start = Instant::now();
    assert_eq!(service.fetch_default().await, Ok(2));
    assert_eq!(start.elapsed(), secs(2));
}

// ---------------------------------------------------------------------------
// Generics and `impl Trait` arguments
// ---------------------------------------------------------------------------

trait Source {
    type Item;
    type Error;
    fn next(&self) -> Result<Self::Item, Self::Error>;
}

trait Transient {
    fn is_transient(&self) -> bool;
}

#[derive(Debug, PartialEq)]
enum SourceError {
    Busy(u32),
    Gone(u32),
}

impl Transient for SourceError {
    fn is_transient(&self) -> bool {
        matches!(self, SourceError::Busy(_))
    }
}

/// Busy for `busy` calls, then either a value or gone.
struct Script {
    calls: AtomicU32,
    busy: u32,
    then_gone: bool,
}

impl Script {
    fn new(busy: u32, then_gone: bool) -> Self {
        Script {
            calls: AtomicU32::new(0),
            busy,
            then_gone,
        }
    }
}

impl Source for Script {
    type Item = String;
    type Error = SourceError;
    fn next(&self) -> Result<String, SourceError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n <= self.busy {
            Err(SourceError::Busy(n))
        } else if self.then_gone {
            Err(SourceError::Gone(n))
        } else {
            Ok(format!("item {n}"))
        }
    }
}

#[retry(immediate, attempts = 10, when = |e| e.is_transient())]
fn generic<S, T, E>(source: &S) -> Result<T, E>
where
    S: Source<Item = T, Error = E> + ?Sized,
    E: Transient,
{
    source.next()
}

#[retry(constant("1s"), attempts = 10, jitter = "none", when = |e| e.is_transient())]
async fn generic_async<S>(source: &S) -> Result<S::Item, S::Error>
where
    S: Source + Sync,
    S::Error: Transient,
{
    source.next()
}

#[test]
fn generic_fn_with_where_clause_and_when_closure() {
    let script = Script::new(2, false);
    assert_eq!(generic(&script), Ok("item 3".to_owned()));
    let gone = Script::new(2, true);
    let result: Result<String, SourceError> = generic(&gone);
    assert_eq!(result, Err(SourceError::Gone(3)));
    let dynamic: &dyn Source<Item = String, Error = SourceError> = &Script::new(1, false);
    assert_eq!(generic(dynamic), Ok("item 2".to_owned()));
}

#[tokio::test(start_paused = true)]
async fn async_generic_fn_with_projections_in_its_return_type() {
    let script = Script::new(3, false);
    let start = Instant::now();
    assert_eq!(generic_async(&script).await, Ok("item 4".to_owned()));
    assert_eq!(start.elapsed(), secs(3));
}

/// A generic impl block with a bound, and a const generic.
struct Buffer<T, const N: usize> {
    items: [T; N],
    flaky: Flaky,
}

impl<T: Clone + PartialEq, const N: usize> Buffer<T, N> {
    #[retry(immediate, attempts = 3)]
    fn first(&self) -> Result<T, u32>
    where
        T: std::fmt::Debug,
    {
        self.flaky.call()?;
        Ok(self.items[0].clone())
    }
}

#[test]
fn method_of_a_generic_impl_with_a_const_parameter() {
    let buffer = Buffer {
        items: ['a', 'b'],
        flaky: Flaky::new(2),
    };
    assert_eq!(buffer.first(), Ok('a'));
    assert_eq!(buffer.flaky.calls(), 3);
}

#[retry(immediate, attempts = 4)]
fn with_impl_fn(op: impl Fn() -> Result<u32, u32>) -> Result<u32, u32> {
    op()
}

#[retry(immediate, attempts = 4)]
fn with_impl_fn_mut(
    mut op: impl FnMut() -> Result<u32, u32>,
    label: impl AsRef<str>,
) -> Result<String, String> {
    op().map(|n| format!("{} {n}", label.as_ref()))
        .map_err(|n| format!("{} failed {n}", label.as_ref()))
}

#[retry(constant("1s"), attempts = 4, jitter = "none")]
async fn with_impl_async(service: &impl Fetch) -> Result<u32, u32> {
    service.fetch()
}

#[test]
fn impl_trait_arguments() {
    let service = Flaky::new(2);
    assert_eq!(with_impl_fn(|| service.call()), Ok(3));
    let mut n = 0;
    let counting = || {
        n += 1;
        if n < 4 { Err(n) } else { Ok(n) }
    };
    assert_eq!(with_impl_fn_mut(counting, "call"), Ok("call 4".to_owned()));
    let mut m = 0;
    let failing = || {
        m += 1;
        Err(m)
    };
    assert_eq!(
        with_impl_fn_mut(failing, String::from("call")),
        Err("call failed 4".to_owned())
    );
}

#[tokio::test(start_paused = true)]
async fn async_fn_with_an_impl_trait_argument() {
    // `Fetch::fetch` retries 3 times itself; the outer call retries that.
    let service = Service::new(7);
    let start = Instant::now();
    assert_eq!(with_impl_async(&service).await, Ok(8));
    assert_eq!(service.flaky.calls(), 8);
    assert_eq!(start.elapsed(), secs(2));
}

// ---------------------------------------------------------------------------
// Return-type aliases
// ---------------------------------------------------------------------------

thread_local! {
    static ATTEMPTS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

fn next_attempt() -> u32 {
    let n = ATTEMPTS.get() + 1;
    ATTEMPTS.set(n);
    n
}

#[retry(immediate, attempts = 3)]
fn io_alias() -> std::io::Result<String> {
    let n = next_attempt();
    Err(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        format!("refused {n}"),
    ))
}

#[retry(immediate, attempts = 3)]
fn io_alias_then_ok() -> std::io::Result<u32> {
    let n = next_attempt();
    if n < 2 {
        Err(std::io::ErrorKind::TimedOut.into())
    } else {
        Ok(n)
    }
}

#[retry(immediate, attempts = 4)]
fn anyhow_alias() -> anyhow::Result<u32> {
    let n = next_attempt();
    match n {
        1 => anyhow::bail!("bail on {n}"),
        2 => {
            // `?` converts the io error into `anyhow::Error`.
            std::fs::read("/definitely/not/a/file/at/all")?;
            unreachable!()
        }
        _ => Err(
            anyhow::Error::new(std::io::Error::other(format!("last {n}")))
                .context("while fetching"),
        ),
    }
}

type Local<T> = Result<T, u32>;

#[retry(immediate, attempts = 3)]
fn local_alias() -> Local<u32> {
    Err(next_attempt())
}

#[test]
fn std_io_result_alias_returns_the_last_error_unchanged() {
    ATTEMPTS.set(0);
    let e = io_alias().unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
    assert_eq!(e.to_string(), "refused 3");
    ATTEMPTS.set(0);
    assert_eq!(io_alias_then_ok().unwrap(), 2);
}

#[test]
fn anyhow_result_alias_retries_and_keeps_the_error_chain() {
    ATTEMPTS.set(0);
    let e = anyhow_alias().unwrap_err();
    assert_eq!(ATTEMPTS.get(), 4);
    assert_eq!(e.to_string(), "while fetching");
    let io = e.downcast_ref::<std::io::Error>().expect("io error kept");
    assert_eq!(io.to_string(), "last 4");
}

#[test]
fn local_result_alias() {
    ATTEMPTS.set(0);
    assert_eq!(local_alias(), Err(3));
}

// ---------------------------------------------------------------------------
// Attributes, doc comments and visibility
// ---------------------------------------------------------------------------

mod visibility {
    use backoff_runtime::retry;
    use backoff_workspace_tests::Flaky;

    /// Documented, `#[must_use]`, `#[inline]`, `pub(crate)`.
    ///
    /// More docs.
    #[must_use = "the result says whether the call succeeded"]
    #[inline]
    #[retry(immediate, attempts = 3)]
    pub(crate) fn documented(service: &Flaky) -> Result<u32, u32> {
        service.call()
    }

    pub(crate) mod nested {
        use backoff_runtime::retry;

        // If `#[retry]` dropped the `#[expect]`, the unused parameter would
        // be an error under the module's `deny`.
        #[deny(unused_variables)]
        pub(in crate::visibility) mod strict {
            use backoff_runtime::retry;

            #[retry(immediate, attempts = 2)]
            #[expect(unused_variables, reason = "kept by the rewrite")]
            #[inline(never)]
            pub(in crate::visibility) fn ignores_its_argument(unused: u32) -> Result<(), u8> {
                Err(7)
            }
        }

        /// Attributes below `#[retry]` are kept too.
        #[retry(immediate, attempts = 2)]
        #[cfg_attr(all(), inline)]
        #[allow(clippy::needless_pass_by_value)]
        pub(super) fn by_value(v: Vec<u8>) -> Result<usize, usize> {
            Err(v.len())
        }
    }

    pub(crate) fn call_restricted() -> (Result<(), u8>, Result<usize, usize>) {
        (
            nested::strict::ignores_its_argument(1),
            nested::by_value(vec![1, 2, 3]),
        )
    }
}

#[test]
fn attributes_docs_and_visibility_are_kept() {
    let service = Flaky::new(1);
    assert_eq!(visibility::documented(&service), Ok(2));
    assert_eq!(visibility::call_restricted(), (Err(7), Err(3)));
}

// ---------------------------------------------------------------------------
// `unsafe fn`
// ---------------------------------------------------------------------------

#[allow(unsafe_code)]
mod unsafe_fns {
    use backoff_runtime::retry;
    use backoff_workspace_tests::Flaky;

    /// Reads through a raw pointer.
    ///
    /// # Safety
    ///
    /// `service` must point to a live `Flaky`.
    #[retry(immediate, attempts = 3)]
    pub(crate) unsafe fn through_pointer(service: *const Flaky) -> Result<u32, u32> {
        // SAFETY: the caller promises that `service` is live.
        unsafe { &*service }.call()
    }

    /// # Safety
    ///
    /// `service` must point to a `Flaky` that outlives the future.
    #[retry(constant("1s"), attempts = 3, jitter = "none")]
    pub(crate) async unsafe fn through_pointer_async(service: *const Flaky) -> Result<u32, u32> {
        // SAFETY: the caller promises that `service` is live.
        unsafe { &*service }.call()
    }

    #[test]
    fn unsafe_fn_keeps_its_unsafety_and_retries() {
        let as_pointer: unsafe fn(*const Flaky) -> Result<u32, u32> = through_pointer;
        let service = Flaky::new(1);
        // SAFETY: `service` lives until the end of the test.
        assert_eq!(unsafe { as_pointer(&service) }, Ok(2));
        let hopeless = Flaky::new(9);
        // SAFETY: as above.
        assert_eq!(unsafe { through_pointer(&hopeless) }, Err(3));
    }

    #[tokio::test(start_paused = true)]
    async fn async_unsafe_fn_retries_on_virtual_time() {
        let service = Flaky::new(5);
        let start = tokio::time::Instant::now();
        // SAFETY: `service` outlives the awaited future.
        assert_eq!(unsafe { through_pointer_async(&service) }.await, Err(3));
        assert_eq!(start.elapsed(), std::time::Duration::from_secs(2));
    }
}

// ---------------------------------------------------------------------------
// Borrowed data
// ---------------------------------------------------------------------------

#[retry(immediate, attempts = 3)]
fn longest<'a>(items: &'a [String], service: &Flaky) -> Result<&'a str, u32> {
    service.call()?;
    items
        .iter()
        .max_by_key(|s| s.len())
        .map(String::as_str)
        .ok_or(0)
}

#[test]
fn free_fn_returns_data_borrowed_from_an_argument() {
    let items = vec!["a".to_owned(), "abc".to_owned(), "ab".to_owned()];
    let service = Flaky::new(2);
    let found = longest(&items, &service).unwrap();
    assert!(std::ptr::eq(found, items[1].as_str()));
    let empty: Vec<String> = Vec::new();
    assert_eq!(longest(&empty, &Flaky::new(0)), Err(0));
}

struct Cache {
    value: String,
    misses: u32,
}

impl Cache {
    #[retry(immediate, attempts = 3)]
    fn get_mut(&mut self) -> Result<&str, u32> {
        if self.misses > 0 {
            self.misses -= 1;
            return Err(self.misses);
        }
        Ok(&self.value)
    }
}

#[test]
fn mut_self_method_returns_borrowed_data() {
    let mut cache = Cache {
        value: "cached".to_owned(),
        misses: 2,
    };
    assert_eq!(cache.get_mut(), Ok("cached"));
    assert_eq!(cache.misses, 0);
}

// ---------------------------------------------------------------------------
// Send and cancellation
// ---------------------------------------------------------------------------

static SHARED: Flaky = Flaky::new(3);

#[retry(immediate, attempts = 5)]
async fn send_free() -> Result<u32, u32> {
    tokio::task::yield_now().await;
    SHARED.call()
}

#[retry(exponential(base = "1ms", max = "2ms"), attempts = 4, when = |_| true, on_retry = |_, _| ())]
async fn send_with_hooks(service: Arc<Service>) -> Result<u32, u32> {
    service.flaky.call()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_futures_are_send_and_run_on_a_multi_thread_runtime() {
    let fut = send_free();
    assert_send(&fut);
    assert_eq!(tokio::spawn(fut).await.unwrap(), Ok(4));

    let service = Arc::new(Service::new(2));
    let fut = send_with_hooks(Arc::clone(&service));
    assert_send(&fut);
    assert_eq!(tokio::spawn(fut).await.unwrap(), Ok(3));

    let fut = Arc::clone(&service).by_arc_async();
    assert_send(&fut);
    assert_eq!(tokio::spawn(fut).await.unwrap(), Ok(4));

    let by_ref = Arc::clone(&service);
    let fut = async move { by_ref.by_ref_async().await };
    assert_send(&fut);
    assert_eq!(tokio::spawn(fut).await.unwrap(), Ok(5));

    // `async fn` in a trait: the impl's and the default body's futures.
    let in_trait = Arc::clone(&service);
    let fut = async move { AsyncFetch::fetch(&*in_trait).await };
    assert_send(&fut);
    assert_eq!(tokio::spawn(fut).await.unwrap(), Ok(6));
    let by_default = Arc::clone(&service);
    let fut = async move { by_default.fetch_default().await };
    assert_send(&fut);
    assert_eq!(tokio::spawn(fut).await.unwrap(), Ok(7));

    // A generic `async fn` over a `Sync` source.
    let script = Arc::new(Script::new(0, false));
    let fut = async move { generic_async(&*script).await };
    assert_send(&fut);
    assert_eq!(tokio::spawn(fut).await.unwrap(), Ok("item 1".to_owned()));
}

/// An error that is not `Send` (an `Rc`): the same function without
/// `#[retry]` is `Send`, since the error is returned, never held across an
/// await; with it, the loop must not hold the error across its sleep.
#[retry(constant("1ms"), attempts = 3, jitter = "none", when = |e: &std::rc::Rc<str>| !e.is_empty(), on_retry = |_, _| ())]
async fn rc_error(service: Arc<Service>) -> Result<u32, std::rc::Rc<str>> {
    service
        .flaky
        .call()
        .map_err(|n| std::rc::Rc::from(n.to_string()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_a_non_send_error_does_not_make_the_future_non_send() {
    let service = Arc::new(Service::new(2));
    let fut = rc_error(Arc::clone(&service));
    assert_send(&fut);
    // The `Rc` is dropped inside the task; the `Ok` crosses back.
    assert_eq!(
        tokio::spawn(async move { fut.await.ok() }).await.unwrap(),
        Some(3)
    );
    assert_eq!(service.flaky.calls(), 3);
}

/// `#[retry]` written inside a `macro_rules!`, its `when`, `on_retry`,
/// `sleep` and `policy` values passed in as fragments: the names the loop
/// declares for them must resolve whatever hygiene the fragments carry.
macro_rules! retried_fns {
    ($when:ident, $on_retry:expr, $sleep:path, $($policy:tt)+) => {
        #[retry(constant("2ms"), attempts = 4, jitter = "none", when = $when, on_retry = $on_retry, sleep = $sleep)]
        fn forwarded(service: &Service) -> Result<u32, u32> {
            service.flaky.call()
        }

        #[retry(policy = $($policy)+, when = $when)]
        async fn forwarded_async(service: &Service) -> Result<u32, u32> {
            service.flaky.call()
        }
    };
}

fn retry_all(_: &u32) -> bool {
    true
}

fn no_sleep(_: Duration) {}

retried_fns!(
    retry_all,
    |_, _| (),
    no_sleep,
    backoff_runtime::Policy::immediate().attempts(4)
);

#[tokio::test]
async fn regression_arguments_forwarded_through_macro_rules_resolve() {
    let service = Service::new(3);
    assert_eq!(forwarded(&service), Ok(4));
    let service = Service::new(2);
    assert_eq!(forwarded_async(&service).await, Ok(3));
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_mid_sleep_cancels_it() {
    #[retry(constant("1s"), attempts = 10, jitter = "none")]
    async fn slow(service: Arc<Service>) -> Result<u32, u32> {
        service.flaky.call()
    }
    let service = Arc::new(Service::new(100));
    let start = Instant::now();
    // Calls at 0 s and 1 s; at 1.5 s the future is asleep until 2 s.
    let outcome = tokio::time::timeout(ms(1500), slow(Arc::clone(&service))).await;
    assert!(outcome.is_err(), "timed out");
    assert_eq!(start.elapsed(), ms(1500));
    assert_eq!(service.flaky.calls(), 2);
    // The dropped future released everything it held...
    assert_eq!(Arc::strong_count(&service), 1);
    // ...and never runs the body again.
    tokio::time::sleep(secs(60)).await;
    assert_eq!(service.flaky.calls(), 2);
}
