//! Instructions per call, counted by valgrind's callgrind: deterministic,
//! so unlike the timing benches it gives the same figures on a busy machine.
//!
//! ```text
//! cargo bench -p backoff-instructions-bench            # every case, ~1 min
//! cargo bench -p backoff-instructions-bench -- async   # the cases (or groups) whose name contains "async"
//! BACKOFF_INSTR_N=1000000 cargo bench -p backoff-instructions-bench   # more calls per run
//! ```
//!
//! The bench is a package of its own so that `backoff-runtime` is built as
//! a user builds it, with its default features only (the root package turns
//! on `tracing` for its tests, whose level check would add ~18 instructions
//! to every retry, and `record`, the recording facade).
//!
//! ```text
//! cargo bench -p backoff-instructions-bench --features record          # with the recording facade (one load per call)
//! cargo bench -p backoff-instructions-bench --features opentelemetry   # and backoff-opentelemetry's recorder in the *_provider cases
//! ```
//!
//! Without valgrind on the `PATH` the bench prints why and exits
//! successfully; `cargo test -p backoff-instructions-bench --benches` runs
//! every case once natively (a smoke test of the cases' results), without
//! valgrind.
//!
//! # What is measured
//!
//! The function is the issue's tiny `fn f(x: u64) -> Result<u64, Fail>`
//! (`x + 1` through a `black_box`, an error branch that is never taken),
//! written four ways with the same body: plain, `#[retry]` (every default),
//! `#[retry(budget = STATIC)]`, `#[retry(circuit = STATIC)]`, and wrapped in
//! a backon closure configured like `#[retry]`'s defaults (exponential
//! 100 ms × 2 up to 10 s, 3 attempts, jitter), and as a hand-written retry
//! loop (a counter and a sleep: `std::thread::sleep`, or tokio's, whose
//! `Sleep` the future then holds), the least any loop that retries and
//! sleeps in the function costs. Each is called in a loop, each call fed
//! the previous call's result:
//!
//! - **success path, sync**: every version `#[inline(never)]`, so each call
//!   is a real call;
//! - **success path, async, as written**: no inline attribute, awaited in a
//!   loop inside one `block_on` of a current-thread tokio runtime (the
//!   compiler inlines the future's poll into the loop where it likes);
//! - **success path, async, out of line**: every version `#[inline(never)]`,
//!   so the caller also copies the returned future (whose size the table
//!   prints).
//!
//! - **hedged call**: `Policy::hedge_async::<2>` hedging after 20 ms
//!   (`backoff_runtime::hedge`), whose first attempt succeeds at once,
//!   against `Policy::retry_async` with the same policy.
//!
//! The **failure path** is a call that fails `F` times and then succeeds,
//! with `immediate` (a zero delay, not slept) and no attempt limit, against
//! the same body in a hand-written `loop` (the reference: what a retry
//! costs at the least) and in backon's loop (`ConstantBuilder` with a zero
//! delay, no limit, a no-op sleep). One more row per flavour uses
//! `#[retry]`'s default strategy (exponential, full jitter: a random draw
//! per retry) with `sleep = noop`, against backon's exponential builder with
//! jitter and a no-op sleep. Two more loops over the same policies split the
//! cost between the runtime and the attribute's expansion:
//!
//! - **`state_loop`**: a hand-written loop over `RetryState::next_delay`
//!   (the manual loop of the docs), inlined: what the runtime's step costs;
//! - **`step_loop`**: a hand-written loop of the shape `#[retry]` expands
//!   to, the body's error kept in the function and the decision made out of
//!   line by `__private::next_retry` (the state built on the first failure
//!   from the attribute's `static`, the verdict a constant), with the
//!   attribute's own policy, state and sleep: what the expansion costs beside the runtime's
//!   step, without the attribute's hooks, traces and checks.
//!
//! # How a figure is made exact
//!
//! Each case runs in a child process under `valgrind --tool=callgrind`
//! twice: success cases with `N` and `2N` calls, failure cases with `N`
//! calls of `F` and of `2F` failures each. Everything else the process does
//! (start-up, building the runtime, printing) is the same in both runs, so
//! the difference of the two instruction totals divided by `N` (or `N·F`)
//! is the cost of one call (or one retry), loop overhead included. The
//! "added" column subtracts the plain (or hand-written) figure of the same
//! group: the cost of the retry machinery alone.

#[path = "../common/mod.rs"]
mod common;

use std::cell::Cell;
use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

use backoff_runtime::strategy::{Chain, Constant, Exponential, Immediate, Sum};
use backoff_runtime::{CircuitBreaker, CircuitOpen, Jitter, Policy, RetryBudget, Strategy, retry};
use backon::{BlockingRetryable, ConstantBuilder, ExponentialBuilder, Retryable as AsyncRetryable};

/// The error of every version.
#[derive(Debug)]
struct Fail(u64);

/// The `when` of the `*_when` rows: every error but the breaker's is
/// transient.
fn transient(e: &Fail) -> bool {
    e.0 != u64::MAX
}

/// The classification of the `*_kinds` rows (`when` beside `on(..)`):
/// every error is transient.
#[derive(Clone, Copy)]
enum FailKind {
    Transient,
    Permanent,
}

fn kind_of(e: &Fail) -> FailKind {
    if e.0 == u64::MAX {
        FailKind::Permanent
    } else {
        FailKind::Transient
    }
}

/// The error of the `*_own_loop` and `*_cancel` rows: a type of their
/// own, so that their loops share no instance with the other rows' (which
/// would move those rows' figures: the optimizer inlines a function used
/// once, not one used twice).
#[derive(Debug)]
struct Stopped;

impl From<backoff_runtime::Cancelled> for Stopped {
    fn from(_: backoff_runtime::Cancelled) -> Self {
        Stopped
    }
}

/// The schedule of the `*_own_loop` and `*_cancel` rows: no delay, as
/// `immediate`, through a strategy of their own (the same reason).
struct Zero;

impl Strategy for Zero {
    fn delay(&self, _: u32, _: Option<Duration>, _: &mut backoff_runtime::JitterRng) -> Duration {
        Duration::ZERO
    }
}

static ZERO: Policy<Zero> = Policy::from_strategy(Zero).unlimited_attempts();

/// [`flaky`], as a [`Stopped`].
fn flaky_stopped(left: &Cell<u64>) -> Result<u64, Stopped> {
    flaky(left).map_err(|_| Stopped)
}

/// The token of the `*_cancel` rows, never cancelled.
static TOKEN: std::sync::LazyLock<backoff_runtime::CancelToken> =
    std::sync::LazyLock::new(backoff_runtime::CancelToken::new);

impl From<CircuitOpen> for Fail {
    fn from(_: CircuitOpen) -> Self {
        Fail(u64::MAX)
    }
}

/// A budget that never runs dry in these runs (successes refill it).
static BUDGET: RetryBudget = RetryBudget::new(10, 0.1);
/// A breaker that stays closed in these runs (no call fails).
static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));

/// The body of every success-path version.
macro_rules! body {
    ($x:expr) => {{
        let x = black_box($x);
        if x == u64::MAX {
            Err(Fail(x))
        } else {
            Ok(x.wrapping_add(1))
        }
    }};
}

/// The body of every failure-path version: fails while `left` is above
/// zero, counting it down.
#[inline(always)]
fn flaky(left: &Cell<u64>) -> Result<u64, Fail> {
    let l = black_box(left.get());
    if l == 0 {
        Ok(7)
    } else {
        left.set(l - 1);
        Err(Fail(l))
    }
}

/// backon configured like `#[retry]`'s defaults.
fn backon_default() -> ExponentialBuilder {
    ExponentialBuilder::new()
        .with_min_delay(Duration::from_millis(100))
        .with_factor(2.0)
        .with_max_delay(Duration::from_secs(10))
        .with_max_times(2)
        .with_jitter()
}

/// backon's `immediate`: a zero constant delay, no limit.
fn backon_immediate() -> ConstantBuilder {
    ConstantBuilder::new()
        .with_delay(Duration::ZERO)
        .without_max_times()
}

/// backon's default-like exponential, without a limit.
fn backon_exponential_unlimited() -> ExponentialBuilder {
    ExponentialBuilder::new()
        .with_min_delay(Duration::from_millis(100))
        .with_factor(2.0)
        .with_max_delay(Duration::from_secs(10))
        .without_max_times()
        .with_jitter()
}

fn noop_sync(_: Duration) {}

// `#[retry]`'s default sleep of a plain fn (a zero delay does not sleep).
use backoff_runtime::__private::sleep_blocking;

/// `#[retry]`'s default sleep of an `async fn`: none for a zero delay, else
/// tokio's timer, polled out of line.
async fn sleep_tokio(delay: Duration) {
    use backoff_runtime::__private::{AsyncSleep, DefaultSleep};
    if !delay.is_zero() {
        <DefaultSleep as AsyncSleep>::sleep(delay).await;
    }
}

async fn noop(_: Duration) {}

/// The sync success-path versions, each `#[inline(never)]`.
mod sync {
    use super::*;

    #[inline(never)]
    pub(crate) fn plain(x: u64) -> Result<u64, Fail> {
        body!(x)
    }

    #[inline(never)]
    #[retry]
    pub(crate) fn with_retry(x: u64) -> Result<u64, Fail> {
        body!(x)
    }

    #[inline(never)]
    #[retry(budget = BUDGET)]
    pub(crate) fn with_budget(x: u64) -> Result<u64, Fail> {
        body!(x)
    }

    #[inline(never)]
    #[retry(circuit = BREAKER)]
    pub(crate) fn with_circuit(x: u64) -> Result<u64, Fail> {
        body!(x)
    }

    #[inline(never)]
    pub(crate) fn with_backon(x: u64) -> Result<u64, Fail> {
        (|| body!(x))
            .retry(backon_default())
            .sleep(std::thread::sleep)
            .call()
    }

    /// A `when` that borrows nothing of the function's: the runtime runs
    /// the loop with every attempt behind a pointer (see `loops::blocking_when`).
    #[inline(never)]
    #[retry(when = transient)]
    pub(crate) fn with_when(x: u64) -> Result<u64, Fail> {
        body!(x)
    }

    #[inline(never)]
    pub(crate) fn with_backon_when(x: u64) -> Result<u64, Fail> {
        (|| body!(x))
            .retry(backon_default())
            .when(transient)
            .sleep(std::thread::sleep)
            .call()
    }

    /// The least a retry loop in the function costs: a hand-written loop
    /// of 3 attempts (a limit the compiler cannot see, so it cannot unroll
    /// the loop) sleeping 200 ms, then 400 ms (no jitter, no state beyond a
    /// counter).
    #[inline(never)]
    pub(crate) fn hand_loop(x: u64) -> Result<u64, Fail> {
        let mut failures = 0u32;
        loop {
            match body!(x) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    failures += 1;
                    if failures == black_box(3) {
                        return Err(e);
                    }
                    std::thread::sleep(Duration::from_millis(100 << failures));
                }
            }
        }
    }
}

/// The async success-path versions, with `$inline` on each.
macro_rules! async_versions {
    ($module:ident, $(#[$inline:meta])*) => {
        mod $module {
            use super::*;

            $(#[$inline])*
            pub(crate) async fn plain(x: u64) -> Result<u64, Fail> {
                body!(x)
            }

            $(#[$inline])*
            #[retry]
            pub(crate) async fn with_retry(x: u64) -> Result<u64, Fail> {
                body!(x)
            }

            $(#[$inline])*
            #[retry(budget = BUDGET)]
            pub(crate) async fn with_budget(x: u64) -> Result<u64, Fail> {
                body!(x)
            }

            $(#[$inline])*
            #[retry(circuit = BREAKER)]
            pub(crate) async fn with_circuit(x: u64) -> Result<u64, Fail> {
                body!(x)
            }

            $(#[$inline])*
            pub(crate) async fn with_backon(x: u64) -> Result<u64, Fail> {
                (|| async { body!(x) })
                    .retry(backon_default())
                    .sleep(tokio::time::sleep)
                    .await
            }

            /// The least a retry loop that sleeps on tokio's timer costs:
            /// a hand-written loop (a counter, `tokio::time::sleep`), whose
            /// future holds the timer.
            $(#[$inline])*
            pub(crate) async fn hand_loop(x: u64) -> Result<u64, Fail> {
                async_hand_loop!(body!(x))
            }

            /// `hand_loop` with its body in a future of its own, as any
            /// loop must run a body whose `?` and `return` end the attempt,
            /// not the call: the least such a loop costs.
            $(#[$inline])*
            pub(crate) async fn hand_loop_nested(x: u64) -> Result<u64, Fail> {
                async_hand_loop!(async { body!(x) }.await)
            }
        }
    };
}

/// The hand-written async retry loop around `$attempt`: a counter, a limit
/// the compiler cannot see, and tokio's sleep.
macro_rules! async_hand_loop {
    ($attempt:expr) => {{
        let mut failures = 0u32;
        loop {
            match $attempt {
                Ok(v) => return Ok(v),
                Err(e) => {
                    failures += 1;
                    if failures == black_box(3) {
                        return Err(e);
                    }
                    tokio::time::sleep(Duration::from_millis(100 << failures)).await;
                }
            }
        }
    }};
}

/// The success path and the recording facade (`backoff_runtime::record`,
/// feature `record` of the runtime, turned on by this package's `record`,
/// which `opentelemetry` implies; without it the runtime is built as a
/// user's default build, with no facade, and every case of this module is
/// its plain `#[retry]` or `Policy::retry`):
/// the attribute's lean loop written out as its expansion emits it
/// (`retry_blocking` with the function's name; the
/// `metrics/retry*` rows are the `#[retry]` functions themselves, the
/// `_budget` ones its general path), and `Policy::retry`. With no recorder
/// installed (every case but these two kinds), the cost of the check; in
/// the `*_noop_recorder` cases, with a recorder that does nothing, the cost
/// of the facade itself (the clock reads, the events built and passed); in
/// the `*_provider` cases (feature `opentelemetry` of this package), with
/// `backoff-opentelemetry` installed over an SDK meter provider, the cost
/// of recording. Without the feature the `*_provider` cases install
/// nothing.
mod metrics {
    use super::*;
    use backoff_runtime::__private as p;

    /// `#[retry]`'s default policy on a plain fn.
    type Default = p::Fixed<p::ExponentialOf<100_000_000>, false>;

    /// `#[retry]`'s lean loop, written out as its expansion records.
    #[inline(never)]
    pub(crate) fn recorded(x: u64) -> Result<u64, Fail> {
        <Result<u64, Fail> as p::RetryResult>::retry_blocking(
            p::origin::<Default>(),
            concat!(module_path!(), "::recorded"),
            p::NoTrace,
            || p::attempt_sync(|| body!(x)),
        )
    }

    /// `#[retry]`'s default policy on an `async fn`.
    type DefaultAsync = p::Fixed<p::ExponentialOf<100_000_000>, true>;

    /// The compact `async fn` loop as the expansion writes it (the
    /// function's own loop over a `Call` in its compact form), for a function named
    /// `$function`.
    macro_rules! compact_loop {
        ($(#[$doc:meta])* $name:ident, $function:expr) => {
            $(#[$doc])*
            #[inline(never)]
            pub(crate) async fn $name(x: u64) -> Result<u64, Fail> {
                let mut call = p::compact::<DefaultAsync>();
                let ended = loop {
                    let outcome = p::attempt(async { body!(x) }).await;
                    let delay = {
                        let error = match outcome {
                            Ok(v) => {
                                call.accepted($function);
                                break p::Ended::Done(Ok(v));
                            }
                            Err(e) => e,
                        };
                        match call.after_error($function, p::NoTrace, p::RETRY, error) {
                            p::ControlFlow::Continue(delay) => delay,
                            p::ControlFlow::Break(ended) => break ended,
                        }
                    };
                    if p::sleeps(delay) {
                        sleep_tokio(delay).await;
                    }
                    call.next_attempt();
                };
                ended.result()
            }
        };
    }

    compact_loop!(
        /// The compact `async fn` loop, under another name: the reference
        /// for [`recorded_async`] (the plain step is gone: every compact
        /// loop records, at the cost of a flag's test while off).
        compact_async,
        ""
    );
    compact_loop!(
        /// [`compact_async`] under the function's name, as the expansion
        /// records it: the call's start (`CallBegan`, 7 bytes) and the
        /// running attempt's, taken at `begin` and after each sleep.
        recorded_async,
        concat!(module_path!(), "::recorded_async")
    );

    /// `#[retry]`'s default policy as a value.
    static POLICY: Policy = Policy::exponential(Duration::from_millis(100))
        .jitter(Jitter::Full)
        .named("instructions::policy_retry");

    /// `Policy::retry`.
    #[inline(never)]
    pub(crate) fn policy_retry(x: u64) -> Result<u64, Fail> {
        POLICY.retry(|| body!(x))
    }

    /// Installs an SDK meter provider (a manual reader, never collected:
    /// the cost measured is the recording's) and `backoff-opentelemetry`'s
    /// recorder over it.
    pub(crate) fn install_provider() {
        #[cfg(feature = "opentelemetry")]
        {
            use opentelemetry_sdk::metrics::{ManualReader, SdkMeterProvider};
            let provider = SdkMeterProvider::builder()
                .with_reader(ManualReader::builder().build())
                .build();
            opentelemetry::global::set_meter_provider(provider);
            // (Each measured case is a process of its own, where this is
            // the first recorder; the smoke test runs every case in one
            // process, where the no-op recorder may have come first.)
            let _ = backoff_opentelemetry::try_install();
        }
    }

    /// A recorder that does nothing with what it is told.
    #[cfg(feature = "record")]
    struct Noop;

    #[cfg(feature = "record")]
    impl backoff_runtime::record::Recorder for Noop {}

    /// Installs a recorder that does nothing: what is left is the facade's
    /// own cost. (In the smoke test's one process a recorder may already be
    /// installed.) Without the feature `record` of this package there is
    /// no facade, and nothing is installed.
    pub(crate) fn install_noop_recorder() {
        #[cfg(feature = "record")]
        {
            static NOOP: Noop = Noop;
            let _ = backoff_runtime::record::set_recorder(&NOOP);
        }
    }
}

/// `#[retry(circuit = SHARED)]` with a breaker shared through Redis
/// (feature `redis` of this package: crate `backoff-redis`): a `static` in
/// a `LazyLock`, as the
/// docs show it. The store points at a port where nothing listens and
/// syncs hourly, so its thread, after one failed connection at start (the
/// same in every run), sleeps: what is counted is the call's path. Without
/// the feature, the case is `sync/retry_circuit`.
#[cfg(feature = "redis")]
mod fleet {
    use super::*;
    use backoff_redis::{RedisStore, SharedBreaker};
    use std::sync::LazyLock;

    static STORE: LazyLock<RedisStore> = LazyLock::new(|| {
        RedisStore::new("redis://127.0.0.1:1/")
            .expect("a valid url")
            .sync_every(Duration::from_secs(3600))
    });
    static SHARED: LazyLock<SharedBreaker> = LazyLock::new(|| {
        STORE.breaker(
            "instructions",
            CircuitBreaker::new(5, 1, Duration::from_secs(30)),
        )
    });

    #[inline(never)]
    #[retry(circuit = SHARED)]
    pub(crate) fn with_shared_circuit(x: u64) -> Result<u64, Fail> {
        body!(x)
    }
}

#[cfg(not(feature = "redis"))]
mod fleet {
    pub(crate) use super::sync::with_circuit as with_shared_circuit;
}

async_versions!(written,);
async_versions!(call, #[inline(never)]);

/// The failure-path versions: `immediate`, no attempt limit.
/// A hedged call (`backoff_runtime::hedge`) whose first attempt succeeds
/// before the hedge delay, against `Policy::retry_async`'s success path
/// with the same policy: what running the attempts in slots, the breaker-
/// and budget-free driver and the (never fired) timer cost.
mod hedged {
    use super::*;
    use backoff_runtime::HedgeDelay;

    static POLICY: Policy<Immediate> = Policy::from_strategy(Immediate).attempts(2);

    /// `Policy::retry_async`, the plain async loop.
    #[inline(never)]
    pub(crate) async fn retry_async(x: u64) -> Result<u64, Fail> {
        POLICY.retry_async(async || body!(x)).await
    }

    /// `hedge_async::<2>` hedging after 20 ms; the first attempt wins at
    /// once, so the timer is armed and dropped, never fired.
    #[inline(never)]
    pub(crate) async fn hedged(x: u64) -> Result<u64, Fail> {
        POLICY
            .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
            .call(|| async move { body!(x) })
            .await
    }
}

mod failing {
    use super::*;

    #[inline(never)]
    pub(crate) fn hand(left: &Cell<u64>) -> Result<u64, Fail> {
        let mut failures = 0u32;
        loop {
            match flaky(left) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    failures = failures.saturating_add(1);
                    if failures == u32::MAX {
                        return Err(e);
                    }
                }
            }
        }
    }

    #[inline(never)]
    #[retry(immediate, attempts = unlimited)]
    pub(crate) fn with_retry(left: &Cell<u64>) -> Result<u64, Fail> {
        flaky(left)
    }

    /// With a `when` that borrows nothing: the runtime's loop with every
    /// attempt and the verdict behind pointers.
    #[inline(never)]
    #[retry(immediate, attempts = unlimited, when = transient)]
    pub(crate) fn with_when(left: &Cell<u64>) -> Result<u64, Fail> {
        flaky(left)
    }

    /// A schedule per kind: `when` beside `on(..)`, the runtime's loop
    /// (as `with_when`), each verdict a kind's.
    #[inline(never)]
    #[retry(when = kind_of,
            on(FailKind::Transient, immediate, attempts = unlimited),
            on(FailKind::Permanent, stop))]
    pub(crate) fn with_kinds(left: &Cell<u64>) -> Result<u64, Fail> {
        flaky(left)
    }

    /// The function's own loop, a zero delay and a no-op sleep: the
    /// `*_cancel` rows without the token.
    #[inline(never)]
    #[retry(policy = &ZERO, sleep = noop_sync)]
    pub(crate) fn with_own_loop(left: &Cell<u64>) -> Result<u64, Stopped> {
        flaky_stopped(left)
    }

    /// `cancel`: the function's own loop, the outcome kept across the
    /// (zero) delay, the token asked at each retry.
    #[inline(never)]
    #[retry(policy = &ZERO, cancel = &*TOKEN)]
    pub(crate) fn with_cancel(left: &Cell<u64>) -> Result<u64, Stopped> {
        flaky_stopped(left)
    }

    #[inline(never)]
    #[retry(attempts = unlimited, sleep = noop_sync)]
    pub(crate) fn with_retry_jitter(left: &Cell<u64>) -> Result<u64, Fail> {
        flaky(left)
    }

    /// `jitter = "spread"`: each delay from the call's phase and the
    /// strategy's central delays.
    #[inline(never)]
    #[retry(attempts = unlimited, jitter = "spread", sleep = noop_sync)]
    pub(crate) fn with_retry_spread(left: &Cell<u64>) -> Result<u64, Fail> {
        flaky(left)
    }

    /// A composed schedule (full jitter, its default): three exponential
    /// retries, then a constant second.
    #[inline(never)]
    #[retry(chain(exponential(times = 3), constant("1s")), attempts = unlimited, sleep = noop_sync)]
    pub(crate) fn with_retry_chain(left: &Cell<u64>) -> Result<u64, Fail> {
        flaky(left)
    }

    /// The essay's `3 + 2ⁿ` minutes, n from 0 (full jitter).
    #[inline(never)]
    #[retry(
        sum(constant("3m"), exponential(base = "1m", max = "1h")),
        attempts = unlimited,
        sleep = noop_sync
    )]
    pub(crate) fn with_retry_sum(left: &Cell<u64>) -> Result<u64, Fail> {
        flaky(left)
    }

    /// A loop of the shape `#[retry]` expands to: the body's error kept in the
    /// function, the decision out of line through the runtime's
    /// `__private::next_retry` (not the whole failure path in a closure that
    /// owns the outcome and hands it back). A reference for the expansion,
    /// with the same policy, `state_from` and sleep as `#[retry]`'s.
    macro_rules! step_loop {
        ($name:ident, $policy:expr, $clock:expr, $sleep:ident) => {
            #[inline(never)]
            pub(crate) fn $name(left: &Cell<u64>) -> Result<u64, Fail> {
                use backoff_runtime::__private as p;
                let mut call = p::Call::begin(&$policy, $clock, false, stringify!($name));
                loop {
                    let outcome: Result<u64, Fail> = p::attempt_sync(|| flaky(left));
                    // The error is dropped in the driver, before the sleep.
                    let delay = {
                        let error = match outcome {
                            Ok(v) => {
                                call.accepted(stringify!($name));
                                return Ok(v);
                            }
                            Err(e) => e,
                        };
                        match call.after_error(stringify!($name), p::NoTrace, p::RETRY, error) {
                            p::ControlFlow::Continue(delay) => delay,
                            p::ControlFlow::Break(ended) => return ended.result(),
                        }
                    };
                    $sleep(delay);
                    call.next_attempt();
                }
            }
        };
        ($name:ident, $policy:expr, $clock:expr, $sleep:ident, async) => {
            #[inline(never)]
            pub(crate) async fn $name(left: &Cell<u64>) -> Result<u64, Fail> {
                use backoff_runtime::__private as p;
                let mut call = p::Call::begin(&$policy, $clock, false, stringify!($name));
                loop {
                    let outcome: Result<u64, Fail> = p::attempt(async { flaky(left) }).await;
                    let delay = {
                        let error = match outcome {
                            Ok(v) => {
                                call.accepted(stringify!($name));
                                return Ok(v);
                            }
                            Err(e) => e,
                        };
                        match call.after_error(stringify!($name), p::NoTrace, p::RETRY, error) {
                            p::ControlFlow::Continue(delay) => delay,
                            p::ControlFlow::Break(ended) => return ended.result(),
                        }
                    };
                    $sleep(delay).await;
                    call.next_attempt();
                }
            }
        };
    }

    // The function's own loop as the expansion writes it (`Call`, whose
    // recording is begun with the call): the plain loop and the recorded
    // one are the same code.
    step_loop!(step_loop, IMMEDIATE_POLICY, SYNC_CLOCK, sleep_blocking);
    step_loop!(
        step_loop_recorded,
        IMMEDIATE_POLICY,
        SYNC_CLOCK,
        sleep_blocking
    );
    step_loop!(step_loop_jitter, EXPONENTIAL_POLICY, SYNC_CLOCK, noop_sync);
    step_loop!(
        step_loop_async,
        IMMEDIATE_POLICY,
        ASYNC_CLOCK,
        sleep_tokio,
        async
    );
    step_loop!(
        step_loop_jitter_async,
        EXPONENTIAL_POLICY,
        ASYNC_CLOCK,
        noop,
        async
    );

    use backoff_runtime::__private::{ASYNC_CLOCK, Origin, SYNC_CLOCK};
    /// `#[retry(immediate, attempts = unlimited)]`'s policy.
    const IMMEDIATE_POLICY: Policy<Immediate> =
        Policy::from_strategy(Immediate).unlimited_attempts();
    /// `#[retry(attempts = unlimited)]`'s policy.
    const EXPONENTIAL_POLICY: Policy<Exponential> =
        Policy::from_strategy(Exponential::new(Duration::from_millis(100)))
            .jitter(Jitter::Full)
            .unlimited_attempts();
    // What `#[retry]` builds from them: the policy and the loop's clock.
    static IMMEDIATE: Origin<'static, Immediate> = Origin::new(&IMMEDIATE_POLICY, SYNC_CLOCK);
    static EXPONENTIAL: Origin<'static, Exponential> = Origin::new(&EXPONENTIAL_POLICY, SYNC_CLOCK);
    /// A hand-written loop over the runtime's state machine (the manual
    /// loop of the docs): what the runtime's step costs, without the
    /// attribute's expansion around it. `start` reads the clock once per
    /// call, which the per-retry figure does not see.
    #[inline(never)]
    pub(crate) fn state_loop<S: Strategy>(
        policy: &Policy<S>,
        left: &Cell<u64>,
    ) -> Result<u64, Fail> {
        let mut state = policy.start();
        loop {
            match flaky(left) {
                Ok(v) => return Ok(v),
                Err(e) => match state.next_delay() {
                    Some(delay) => noop_sync(delay),
                    None => return Err(e),
                },
            }
        }
    }

    pub(crate) fn state_loop_immediate(left: &Cell<u64>) -> Result<u64, Fail> {
        state_loop(IMMEDIATE.policy, left)
    }

    pub(crate) fn state_loop_jitter(left: &Cell<u64>) -> Result<u64, Fail> {
        state_loop(EXPONENTIAL.policy, left)
    }

    /// `with_retry_chain`'s policy.
    static CHAIN_POLICY: Policy<Chain<Exponential, Constant>> = Policy::from_strategy(Chain::new(
        Exponential::new(Duration::from_millis(100)),
        3,
        Constant::new(Duration::from_secs(1)).max_delay(Duration::from_secs(1)),
    ))
    .jitter(Jitter::Full)
    .unlimited_attempts();

    /// `with_retry_sum`'s policy.
    static SUM_POLICY: Policy<Sum<Constant, Exponential>> = Policy::from_strategy(Sum::new(
        Constant::new(Duration::from_secs(180)).max_delay(Duration::from_secs(180)),
        Exponential::new(Duration::from_secs(60)).max_delay(Duration::from_secs(3600)),
    ))
    .jitter(Jitter::Full)
    .unlimited_attempts();

    pub(crate) fn state_loop_chain(left: &Cell<u64>) -> Result<u64, Fail> {
        state_loop(&CHAIN_POLICY, left)
    }

    pub(crate) fn state_loop_sum(left: &Cell<u64>) -> Result<u64, Fail> {
        state_loop(&SUM_POLICY, left)
    }

    /// [`state_loop`], awaited.
    #[inline(never)]
    pub(crate) async fn state_loop_async<S: Strategy>(
        policy: &Policy<S>,
        left: &Cell<u64>,
    ) -> Result<u64, Fail> {
        let mut state = policy.start();
        loop {
            match async { flaky(left) }.await {
                Ok(v) => return Ok(v),
                Err(e) => match state.next_delay() {
                    Some(delay) => noop(delay).await,
                    None => return Err(e),
                },
            }
        }
    }

    pub(crate) async fn state_loop_immediate_async(left: &Cell<u64>) -> Result<u64, Fail> {
        state_loop_async(IMMEDIATE.policy, left).await
    }

    pub(crate) async fn state_loop_jitter_async(left: &Cell<u64>) -> Result<u64, Fail> {
        state_loop_async(EXPONENTIAL.policy, left).await
    }

    #[inline(never)]
    pub(crate) fn with_backon(left: &Cell<u64>) -> Result<u64, Fail> {
        (|| flaky(left))
            .retry(backon_immediate())
            .sleep(noop_sync)
            .call()
    }

    #[inline(never)]
    pub(crate) fn with_backon_jitter(left: &Cell<u64>) -> Result<u64, Fail> {
        (|| flaky(left))
            .retry(backon_exponential_unlimited())
            .sleep(noop_sync)
            .call()
    }

    #[inline(never)]
    pub(crate) async fn hand_async(left: &Cell<u64>) -> Result<u64, Fail> {
        let mut failures = 0u32;
        loop {
            match async { flaky(left) }.await {
                Ok(v) => return Ok(v),
                Err(e) => {
                    failures = failures.saturating_add(1);
                    if failures == u32::MAX {
                        return Err(e);
                    }
                }
            }
        }
    }

    #[inline(never)]
    #[retry(immediate, attempts = unlimited)]
    pub(crate) async fn with_retry_async(left: &Cell<u64>) -> Result<u64, Fail> {
        flaky(left)
    }

    /// With a `when`: the compact loop, the verdict taken in the function.
    #[inline(never)]
    #[retry(immediate, attempts = unlimited, when = transient)]
    pub(crate) async fn with_when_async(left: &Cell<u64>) -> Result<u64, Fail> {
        flaky(left)
    }

    /// A schedule per kind: the function's own loop over a `RetryState`.
    #[inline(never)]
    #[retry(when = kind_of,
            on(FailKind::Transient, immediate, attempts = unlimited),
            on(FailKind::Permanent, stop))]
    pub(crate) async fn with_kinds_async(left: &Cell<u64>) -> Result<u64, Fail> {
        flaky(left)
    }

    #[inline(never)]
    #[retry(policy = &ZERO, sleep = noop)]
    pub(crate) async fn with_own_loop_async(left: &Cell<u64>) -> Result<u64, Stopped> {
        flaky_stopped(left)
    }

    #[inline(never)]
    #[retry(policy = &ZERO, cancel = &*TOKEN)]
    pub(crate) async fn with_cancel_async(left: &Cell<u64>) -> Result<u64, Stopped> {
        flaky_stopped(left)
    }

    #[inline(never)]
    #[retry(attempts = unlimited, sleep = noop)]
    pub(crate) async fn with_retry_jitter_async(left: &Cell<u64>) -> Result<u64, Fail> {
        flaky(left)
    }

    #[inline(never)]
    pub(crate) async fn with_backon_async(left: &Cell<u64>) -> Result<u64, Fail> {
        (|| async { flaky(left) })
            .retry(backon_immediate())
            .sleep(noop)
            .await
    }

    #[inline(never)]
    pub(crate) async fn with_backon_jitter_async(left: &Cell<u64>) -> Result<u64, Fail> {
        (|| async { flaky(left) })
            .retry(backon_exponential_unlimited())
            .sleep(noop)
            .await
    }
}

/// `n` chained calls of a sync version; returns the last result.
fn run_sync(n: u64, f: impl Fn(u64) -> Result<u64, Fail>) -> u64 {
    let mut acc = 0u64;
    for _ in 0..n {
        acc = match f(acc) {
            Ok(v) => v,
            Err(e) => e.0,
        };
    }
    acc
}

/// `n` chained calls of an async version inside one `block_on`.
fn run_async<F: Future<Output = Result<u64, Fail>>>(n: u64, f: impl Fn(u64) -> F) -> u64 {
    common::runtime().block_on(async {
        let mut acc = 0u64;
        for _ in 0..n {
            acc = match f(acc).await {
                Ok(v) => v,
                Err(e) => e.0,
            };
        }
        acc
    })
}

/// `n` calls of a sync failure-path version, each failing `failures` times.
fn run_failing<Er>(n: u64, failures: u64, f: impl Fn(&Cell<u64>) -> Result<u64, Er>) -> u64 {
    let left = Cell::new(0);
    let mut acc = 0u64;
    for _ in 0..n {
        left.set(failures);
        acc = acc.wrapping_add(f(&left).unwrap_or(0));
    }
    acc
}

/// [`run_failing`] for an async version, inside one `block_on`.
fn run_failing_async<'a, Er, F: Future<Output = Result<u64, Er>> + 'a>(
    n: u64,
    failures: u64,
    left: &'a Cell<u64>,
    f: impl Fn(&'a Cell<u64>) -> F,
) -> u64 {
    common::runtime().block_on(async {
        let mut acc = 0u64;
        for _ in 0..n {
            left.set(failures);
            acc = acc.wrapping_add(f(left).await.unwrap_or(0));
        }
        acc
    })
}

/// A table group: a title, and its cases (the first is the reference).
struct Group {
    title: &'static str,
    kind: Kind,
    cases: &'static [&'static str],
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Per call: `N` vs `2N` calls.
    Success,
    /// Per retry: `N` calls of `F` vs `2F` failures.
    Failure,
}

const GROUPS: &[Group] = &[
    Group {
        title: "success path, hedged call whose first attempt wins before the delay, #[inline(never)]",
        kind: Kind::Success,
        cases: &["async_call/plain", "hedge/retry_async", "hedge/hedged"],
    },
    Group {
        title: "success path, sync, #[inline(never)]",
        kind: Kind::Success,
        cases: &[
            "sync/plain",
            "sync/retry",
            "sync/retry_budget",
            "sync/retry_circuit",
            "sync/backon",
            "sync/hand_loop",
            "sync/retry_when",
            "sync/backon_when",
        ],
    },
    Group {
        title: "success path, sync, #[inline(never)], a breaker shared through Redis (feature `redis` of this package; without it, the local breaker twice)",
        kind: Kind::Success,
        cases: &["sync/retry_circuit", "fleet/retry_shared_circuit"],
    },
    Group {
        title: "success path, sync, recording (feature `record` of this package, else no facade; no recorder installed; *_noop_recorder: one that does nothing; *_provider: backoff-opentelemetry over an SDK provider, feature `opentelemetry` of this package)",
        kind: Kind::Success,
        cases: &[
            "sync/plain",
            "metrics/retry",
            "metrics/recorded",
            "metrics/retry_budget",
            "metrics/policy_retry",
            "metrics/retry_noop_recorder",
            "metrics/retry_provider",
            "metrics/recorded_provider",
            "metrics/retry_budget_provider",
            "metrics/policy_retry_provider",
        ],
    },
    Group {
        title: "success path, async, #[inline(never)], metrics (as above)",
        kind: Kind::Success,
        cases: &[
            "async_call/plain",
            "metrics/async_compact",
            "metrics/async_recorded",
            "metrics/async_retry",
            "metrics/async_retry_budget",
            "metrics/async_retry_noop_recorder",
            "metrics/async_recorded_provider",
            "metrics/async_retry_provider",
            "metrics/async_retry_budget_provider",
        ],
    },
    Group {
        title: "success path, async, as written (inlined where the compiler likes)",
        kind: Kind::Success,
        cases: &[
            "async_written/plain",
            "async_written/retry",
            "async_written/retry_budget",
            "async_written/retry_circuit",
            "async_written/backon",
            "async_written/hand_loop",
            "async_written/hand_loop_nested",
        ],
    },
    Group {
        title: "success path, async, #[inline(never)] (the caller copies the future)",
        kind: Kind::Success,
        cases: &[
            "async_call/plain",
            "async_call/retry",
            "async_call/retry_budget",
            "async_call/retry_circuit",
            "async_call/backon",
            "async_call/hand_loop",
            "async_call/hand_loop_nested",
        ],
    },
    Group {
        title: "failure path per retry, sync (immediate, no limit; jitter rows: default exponential, full jitter, no-op sleep)",
        kind: Kind::Failure,
        cases: &[
            "fail_sync/hand_loop",
            "fail_sync/retry",
            "fail_sync/retry_when",
            "fail_sync/retry_kinds",
            "fail_sync/state_loop",
            "fail_sync/step_loop",
            "fail_sync/step_loop_recorded",
            "fail_sync/backon",
            "fail_sync/retry_jitter",
            "fail_sync/state_loop_jitter",
            "fail_sync/step_loop_jitter",
            "fail_sync/backon_jitter",
            "fail_sync/retry_spread",
            "fail_sync/retry_chain",
            "fail_sync/state_loop_chain",
            "fail_sync/retry_sum",
            "fail_sync/state_loop_sum",
            "fail_sync/retry_own_loop",
            "fail_sync/retry_cancel",
        ],
    },
    Group {
        title: "failure path per retry, async (same)",
        kind: Kind::Failure,
        cases: &[
            "fail_async/hand_loop",
            "fail_async/retry",
            "fail_async/retry_when",
            "fail_async/retry_kinds",
            "fail_async/state_loop",
            "fail_async/step_loop",
            "fail_async/backon",
            "fail_async/retry_jitter",
            "fail_async/state_loop_jitter",
            "fail_async/step_loop_jitter",
            "fail_async/backon_jitter",
            "fail_async/retry_own_loop",
            "fail_async/retry_cancel",
        ],
    },
];

/// Runs one case: `n` calls (each failing `failures` times, for the failure
/// cases). Returns a checksum, so nothing is optimized away.
fn run_case(case: &str, n: u64, failures: u64) -> Option<u64> {
    let left = Cell::new(0);
    let r = match case {
        "sync/plain" => run_sync(n, sync::plain),
        "sync/retry" => run_sync(n, sync::with_retry),
        "sync/retry_budget" => run_sync(n, sync::with_budget),
        "sync/retry_circuit" => run_sync(n, sync::with_circuit),
        "sync/backon" => run_sync(n, sync::with_backon),
        "sync/retry_when" => run_sync(n, sync::with_when),
        "sync/backon_when" => run_sync(n, sync::with_backon_when),
        "fleet/retry_shared_circuit" => run_sync(n, fleet::with_shared_circuit),
        "sync/hand_loop" => run_sync(n, sync::hand_loop),
        "metrics/retry" => run_sync(n, sync::with_retry),
        "metrics/recorded" => run_sync(n, metrics::recorded),
        "metrics/policy_retry" => run_sync(n, metrics::policy_retry),
        "metrics/async_compact" => run_async(n, metrics::compact_async),
        "metrics/async_recorded" => run_async(n, metrics::recorded_async),
        "metrics/async_recorded_provider" => {
            metrics::install_provider();
            run_async(n, metrics::recorded_async)
        }
        "metrics/recorded_provider" => {
            metrics::install_provider();
            run_sync(n, metrics::recorded)
        }
        "metrics/retry_budget" => run_sync(n, sync::with_budget),
        "metrics/retry_noop_recorder" => {
            metrics::install_noop_recorder();
            run_sync(n, sync::with_retry)
        }
        "metrics/async_retry_noop_recorder" => {
            metrics::install_noop_recorder();
            run_async(n, call::with_retry)
        }
        "metrics/retry_provider" => {
            metrics::install_provider();
            run_sync(n, sync::with_retry)
        }
        "metrics/retry_budget_provider" => {
            metrics::install_provider();
            run_sync(n, sync::with_budget)
        }
        "metrics/async_retry" => run_async(n, call::with_retry),
        "metrics/async_retry_budget" => run_async(n, call::with_budget),
        "metrics/async_retry_provider" => {
            metrics::install_provider();
            run_async(n, call::with_retry)
        }
        "metrics/async_retry_budget_provider" => {
            metrics::install_provider();
            run_async(n, call::with_budget)
        }
        "metrics/policy_retry_provider" => {
            metrics::install_provider();
            run_sync(n, metrics::policy_retry)
        }
        "async_written/plain" => run_async(n, written::plain),
        "async_written/retry" => run_async(n, written::with_retry),
        "async_written/retry_budget" => run_async(n, written::with_budget),
        "async_written/retry_circuit" => run_async(n, written::with_circuit),
        "async_written/backon" => run_async(n, written::with_backon),
        "async_written/hand_loop" => run_async(n, written::hand_loop),
        "async_written/hand_loop_nested" => run_async(n, written::hand_loop_nested),
        "async_call/plain" => run_async(n, call::plain),
        "hedge/retry_async" => run_async(n, hedged::retry_async),
        "hedge/hedged" => run_async(n, hedged::hedged),
        "async_call/retry" => run_async(n, call::with_retry),
        "async_call/retry_budget" => run_async(n, call::with_budget),
        "async_call/retry_circuit" => run_async(n, call::with_circuit),
        "async_call/backon" => run_async(n, call::with_backon),
        "async_call/hand_loop" => run_async(n, call::hand_loop),
        "async_call/hand_loop_nested" => run_async(n, call::hand_loop_nested),
        "fail_sync/hand_loop" => run_failing(n, failures, failing::hand),
        "fail_sync/retry" => run_failing(n, failures, failing::with_retry),
        "fail_sync/retry_when" => run_failing(n, failures, failing::with_when),
        "fail_sync/retry_kinds" => run_failing(n, failures, failing::with_kinds),
        "fail_sync/backon" => run_failing(n, failures, failing::with_backon),
        "fail_sync/state_loop" => run_failing(n, failures, failing::state_loop_immediate),
        "fail_sync/state_loop_jitter" => run_failing(n, failures, failing::state_loop_jitter),
        "fail_sync/retry_spread" => run_failing(n, failures, failing::with_retry_spread),
        "fail_sync/retry_chain" => run_failing(n, failures, failing::with_retry_chain),
        "fail_sync/state_loop_chain" => run_failing(n, failures, failing::state_loop_chain),
        "fail_sync/retry_sum" => run_failing(n, failures, failing::with_retry_sum),
        "fail_sync/state_loop_sum" => run_failing(n, failures, failing::state_loop_sum),
        "fail_sync/step_loop" => run_failing(n, failures, failing::step_loop),
        "fail_sync/step_loop_recorded" => run_failing(n, failures, failing::step_loop_recorded),
        "fail_sync/step_loop_jitter" => run_failing(n, failures, failing::step_loop_jitter),
        "fail_sync/retry_jitter" => run_failing(n, failures, failing::with_retry_jitter),
        "fail_sync/backon_jitter" => run_failing(n, failures, failing::with_backon_jitter),
        "fail_sync/retry_own_loop" => run_failing(n, failures, failing::with_own_loop),
        "fail_sync/retry_cancel" => run_failing(n, failures, failing::with_cancel),
        "fail_async/retry_own_loop" => {
            run_failing_async(n, failures, &left, failing::with_own_loop_async)
        }
        "fail_async/retry_cancel" => {
            run_failing_async(n, failures, &left, failing::with_cancel_async)
        }
        "fail_async/hand_loop" => run_failing_async(n, failures, &left, failing::hand_async),
        "fail_async/retry" => run_failing_async(n, failures, &left, failing::with_retry_async),
        "fail_async/retry_when" => run_failing_async(n, failures, &left, failing::with_when_async),
        "fail_async/retry_kinds" => {
            run_failing_async(n, failures, &left, failing::with_kinds_async)
        }
        "fail_async/backon" => run_failing_async(n, failures, &left, failing::with_backon_async),
        "fail_async/state_loop" => {
            run_failing_async(n, failures, &left, failing::state_loop_immediate_async)
        }
        "fail_async/state_loop_jitter" => {
            run_failing_async(n, failures, &left, failing::state_loop_jitter_async)
        }
        "fail_async/step_loop" => run_failing_async(n, failures, &left, failing::step_loop_async),
        "fail_async/step_loop_jitter" => {
            run_failing_async(n, failures, &left, failing::step_loop_jitter_async)
        }
        "fail_async/retry_jitter" => {
            run_failing_async(n, failures, &left, failing::with_retry_jitter_async)
        }
        "fail_async/backon_jitter" => {
            run_failing_async(n, failures, &left, failing::with_backon_jitter_async)
        }
        _ => return None,
    };
    Some(r)
}

/// Calls per run (success cases) or calls of `F` failures (failure cases).
fn calls(kind: Kind) -> u64 {
    let n = std::env::var("BACKOFF_INSTR_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000u64);
    match kind {
        Kind::Success => n,
        // Each call retries F times: fewer calls for the same work.
        Kind::Failure => (n / 1000).max(1),
    }
}

/// Failures per call in the failure cases' shorter run.
const FAILURES: u64 = 100;

/// The instructions callgrind counts for one child run of `case`.
fn count(case: &str, n: u64, failures: u64) -> Result<u64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::env::temp_dir().join(format!(
        "backoff-instructions-{}-{}.out",
        std::process::id(),
        case.replace('/', "-")
    ));
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(exe)
        .args(["--measure", case, &n.to_string(), &failures.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("running valgrind: {e}"))?;
    if !status.status.success() {
        return Err(format!(
            "valgrind failed on {case}: {}",
            String::from_utf8_lossy(&status.stderr)
        ));
    }
    let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    text.lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("no instruction total in callgrind's output for {case}"))
}

/// Instructions per call (success) or per retry (failure) of `case`.
fn per_unit(case: &str, kind: Kind) -> Result<f64, String> {
    let n = calls(kind);
    match kind {
        Kind::Success => {
            let one = count(case, n, 0)?;
            let two = count(case, 2 * n, 0)?;
            Ok((two as f64 - one as f64) / n as f64)
        }
        Kind::Failure => {
            let one = count(case, n, FAILURES)?;
            let two = count(case, n, 2 * FAILURES)?;
            Ok((two as f64 - one as f64) / (n * FAILURES) as f64)
        }
    }
}

fn valgrind_available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Sizes of the futures the async versions return.
fn future_sizes() {
    let written = [
        ("plain", size_of_val(&written::plain(0))),
        ("#[retry]", size_of_val(&written::with_retry(0))),
        ("budget", size_of_val(&written::with_budget(0))),
        ("circuit", size_of_val(&written::with_circuit(0))),
        ("backon", size_of_val(&written::with_backon(0))),
        ("hand loop", size_of_val(&written::hand_loop(0))),
        (
            "nested hand loop",
            size_of_val(&written::hand_loop_nested(0)),
        ),
    ];
    let sizes: Vec<String> = written.iter().map(|(n, s)| format!("{n} {s} B")).collect();
    println!("future sizes: {}", sizes.join(", "));
    // What an `async fn` under `#[retry]` keeps across its awaits besides
    // the body's future: the retry state's slot, and the sleep (tokio's
    // timer, while it is awaited). Their sum is the floor of the future's
    // growth without allocating.
    println!(
        "parts: Option<RetryState<Exponential>> {} B, tokio::time::Sleep {} B",
        size_of::<Option<backoff_runtime::RetryState<'static, Exponential>>>(),
        size_of::<tokio::time::Sleep>(),
    );
    println!(
        "hedged call (`hedge_async::<2>`, the hedge/hedged case): future {} B against {} B for `retry_async`",
        size_of_val(&hedged::hedged(0)),
        size_of_val(&hedged::retry_async(0)),
    );
    println!(
        "a schedule per kind (immediate, async, failure path): future {} B against {} B without kinds",
        size_of_val(&failing::with_kinds_async(&Cell::new(0))),
        size_of_val(&failing::with_retry_async(&Cell::new(0))),
    );
}

/// Every case once, natively, with small counts: the results are right.
fn smoke() {
    for group in GROUPS {
        for case in group.cases {
            let (n, failures) = match group.kind {
                Kind::Success => (3, 0),
                Kind::Failure => (2, 5),
            };
            let got = run_case(case, n, failures).expect("a known case");
            let want = match group.kind {
                Kind::Success => 3,
                Kind::Failure => 14,
            };
            assert_eq!(got, want, "{case}");
        }
    }
    println!(
        "instructions: every case ran natively (smoke test; `cargo bench -p backoff-instructions-bench` counts)"
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, case, n, failures] = &args[..]
        && flag == "--measure"
    {
        let n: u64 = n.parse().expect("a call count");
        let failures: u64 = failures.parse().expect("a failure count");
        // On a thread of its own: its stack begins page-aligned, so the
        // addresses of the futures the cases move (and the instructions
        // `memcpy` takes to copy them, which depend on the destination's
        // alignment) do not depend on the size of the environment, the
        // arguments or the executable's path, which move the main thread's
        // stack (a 408-byte future measured 190 or 214 instructions per
        // call with an environment 16 bytes longer).
        let case = case.clone();
        let r = std::thread::spawn(move || {
            run_case(&case, n, failures).unwrap_or_else(|| panic!("unknown case {case}"))
        })
        .join()
        .expect("the measured case ran");
        black_box(r);
        return;
    }
    if !common::benchmarking() {
        smoke();
        return;
    }
    if !valgrind_available() {
        println!(
            "instructions: skipped, valgrind not found on the PATH (install it, e.g. `apt-get install valgrind`, to count instructions)"
        );
        return;
    }
    // `cargo bench -p backoff-instructions-bench -- FILTER`: the cases whose name, or
    // whose group's title, contains FILTER.
    let filter = args[1..]
        .iter()
        .find(|a| !a.starts_with("--"))
        .cloned()
        .unwrap_or_default();
    smoke();
    future_sizes();
    println!(
        "instructions per call (success) or per retry (failure), callgrind, (I(2N) - I(N)) / N with N = {} calls (success) or {} calls x {FAILURES} failures (failure):",
        calls(Kind::Success),
        calls(Kind::Failure),
    );
    for group in GROUPS {
        let cases: Vec<&str> = group
            .cases
            .iter()
            .copied()
            .filter(|c| c.contains(&filter) || group.title.contains(&filter))
            .collect();
        if cases.is_empty() {
            continue;
        }
        println!("\n{}", group.title);
        let mut reference = None;
        for case in cases {
            match per_unit(case, group.kind) {
                Ok(v) => {
                    let reference = *reference.get_or_insert((case, v));
                    if reference.0 == case {
                        println!("  {case:<28} {v:>8.2}");
                    } else {
                        println!(
                            "  {case:<28} {v:>8.2}   ({:+.2} vs {})",
                            v - reference.1,
                            reference.0
                        );
                    }
                }
                Err(e) => println!("  {case:<28} error: {e}"),
            }
        }
    }
}
