//! Integration tests of every argument of the `#[retry]` attribute, as
//! SPEC.md describes them: each strategy form and its exact sleeps, attempts,
//! every jitter and its bounds, `max_elapsed`, `when` (paths and closures,
//! `bool` and `Decision`), `on_retry`, `sleep`, `policy` and `crate`; plus
//! what the rewritten body does with errors, `?`, `return` and panics.
//!
//! Sleeps are observed by injecting `sleep = record`, which pushes each delay
//! into a thread-local log instead of sleeping; time-based behaviour runs on
//! tokio's paused virtual clock. No test reads the wall clock.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use backoff_runtime::{Decision, Jitter, JitterRng, Policy, RetryEvent, retry};

// ---------------------------------------------------------------------------
// Helpers: a per-thread log of calls and sleeps (each test runs on its own
// thread, and every test starts by clearing the log anyway).
// ---------------------------------------------------------------------------

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
    static SLEEPS: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
    static EVENTS: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
}

/// What happened during a call, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    /// The body ran for the n-th time.
    Call(u32),
    /// `on_retry` ran: the failed attempt's error and the event.
    OnRetry {
        error: u32,
        attempt: u32,
        delay: Duration,
    },
    /// The injected sleep ran.
    Slept(Duration),
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Clears this thread's log.
fn fresh() {
    CALLS.set(0);
    SLEEPS.take();
    EVENTS.take();
}

/// Most calls any test here expects of one function call; a loop that
/// retries past it is a bug, reported by a panic rather than a hang.
const RUNAWAY: u32 = 1000;

/// Counts a call of a body; returns its number, from 1.
fn next_call() -> u32 {
    let n = CALLS.get() + 1;
    assert!(n <= RUNAWAY, "runaway retry loop: {n} calls");
    CALLS.set(n);
    EVENTS.with_borrow_mut(|e| e.push(Event::Call(n)));
    n
}

fn calls() -> u32 {
    CALLS.get()
}

/// The sleeps recorded so far (and clears them).
fn sleeps() -> Vec<Duration> {
    SLEEPS.take()
}

fn events() -> Vec<Event> {
    EVENTS.take()
}

/// The injected blocking sleep: records instead of sleeping.
fn record(d: Duration) {
    SLEEPS.with_borrow_mut(|s| s.push(d));
    EVENTS.with_borrow_mut(|e| e.push(Event::Slept(d)));
}

/// The injected async sleep: records instead of sleeping (so virtual time
/// does not move).
async fn record_async(d: Duration) {
    record(d);
}

/// An error that says which attempt produced it.
#[derive(Debug, PartialEq, Eq)]
struct Failure {
    attempt: u32,
    transient: bool,
}

impl Failure {
    fn transient(attempt: u32) -> Self {
        Failure {
            attempt,
            transient: true,
        }
    }

    fn permanent(attempt: u32) -> Self {
        Failure {
            attempt,
            transient: false,
        }
    }

    fn is_transient(&self) -> bool {
        self.transient
    }
}

/// Draws from a fresh function `n` times, each call giving one sleep.
fn sample(n: usize, f: fn() -> Result<(), u32>) -> Vec<Duration> {
    fresh();
    for _ in 0..n {
        assert_eq!(f(), Err(2));
        CALLS.set(0);
    }
    let s = sleeps();
    assert_eq!(s.len(), n);
    s
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

#[test]
fn exponential_with_base_and_max_doubles_then_caps() {
    #[retry(exponential(base = "100ms", max = "600ms"), attempts = 6, jitter = "none", sleep = record)]
    fn always_fails() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(always_fails(), Err(6));
    assert_eq!(sleeps(), [ms(100), ms(200), ms(400), ms(600), ms(600)]);
}

/// The runtime's Sidekiq and buckets schedules in the attribute: retry k
/// (n = k − 1) waits n⁴ + 15 + rand · 30 · (n + 1) units (Sidekiq) or
/// uniform(n³, (n + 2)³) units (buckets), random by themselves, so no jitter
/// by default, and capped by `max`.
#[test]
fn sidekiq_and_buckets_are_attribute_strategies() {
    #[retry(sidekiq(unit = "1ms"), attempts = 4, sleep = record)]
    fn sidekiq() -> Result<(), u32> {
        Err(next_call())
    }
    #[retry(buckets(unit = "1ms", max = "20ms"), attempts = 5, sleep = record)]
    fn buckets() -> Result<(), u32> {
        Err(next_call())
    }
    for _ in 0..50 {
        fresh();
        assert_eq!(sidekiq(), Err(4));
        let s = sleeps();
        assert_eq!(s.len(), 3);
        // n = 0, 1, 2: [15, 45], [16, 76], [31, 121] ms.
        for (d, (lo, hi)) in s.iter().zip([(15, 45), (16, 76), (31, 121)]) {
            assert!(*d >= ms(lo) && *d <= ms(hi), "{s:?}");
        }
        fresh();
        assert_eq!(buckets(), Err(5));
        let s = sleeps();
        assert_eq!(s.len(), 4);
        // n = 0, 1, 2, 3: [0, 8], [1, 27], [8, 64], [27, 125] ms, capped at 20.
        for (d, (lo, hi)) in s.iter().zip([(0, 8), (1, 20), (8, 20), (20, 20)]) {
            assert!(*d >= ms(lo) && *d <= ms(hi), "{s:?}");
        }
    }
}

#[test]
fn exponential_factor_sets_the_growth_rate() {
    #[retry(exponential(base = "100ms", factor = 3, max = "10s"), attempts = 5, jitter = "none", sleep = record)]
    fn triples() -> Result<(), u32> {
        Err(next_call())
    }
    #[retry(exponential(factor = 1.5, base = "100ms"), attempts = 4, jitter = "none", sleep = record)]
    fn one_and_a_half() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(triples(), Err(5));
    assert_eq!(sleeps(), [ms(100), ms(300), ms(900), ms(2700)]);
    fresh();
    assert_eq!(one_and_a_half(), Err(4));
    assert_eq!(sleeps(), [ms(100), ms(150), ms(225)]);
}

#[test]
fn bare_exponential_defaults_to_100ms_doubling_capped_at_10s() {
    #[retry(exponential, attempts = 10, jitter = "none", sleep = record)]
    fn defaults() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(defaults(), Err(10));
    let expected = [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000].map(ms);
    assert_eq!(sleeps(), expected);
}

#[test]
fn linear_adds_the_base_each_retry_then_caps() {
    #[retry(linear(base = "100ms", max = "350ms"), attempts = 6, jitter = "none", sleep = record)]
    fn capped() -> Result<(), u32> {
        Err(next_call())
    }
    #[retry(linear(base = "1s"), attempts = 4, jitter = "none", sleep = record)]
    fn uncapped() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(capped(), Err(6));
    assert_eq!(sleeps(), [ms(100), ms(200), ms(300), ms(350), ms(350)]);
    fresh();
    assert_eq!(uncapped(), Err(4));
    assert_eq!(sleeps(), [secs(1), secs(2), secs(3)]);
}

#[test]
fn constant_waits_the_same_delay_in_both_forms() {
    #[retry(constant("1s"), attempts = 4, jitter = "none", sleep = record)]
    fn positional() -> Result<(), u32> {
        Err(next_call())
    }
    #[retry(constant(delay = "250ms"), attempts = 3, jitter = "none", sleep = record)]
    fn named() -> Result<(), u32> {
        Err(next_call())
    }
    #[retry(constant("1m30s"), attempts = 2, jitter = "none", sleep = record)]
    fn compound_duration() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(positional(), Err(4));
    assert_eq!(sleeps(), [secs(1); 3]);
    fresh();
    assert_eq!(named(), Err(3));
    assert_eq!(sleeps(), [ms(250); 2]);
    fresh();
    assert_eq!(compound_duration(), Err(2));
    assert_eq!(sleeps(), [secs(90)]);
}

#[test]
fn bare_constant_defaults_to_one_second() {
    #[retry(constant, attempts = 3, jitter = "none", sleep = record)]
    fn defaults() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(defaults(), Err(3));
    assert_eq!(sleeps(), [secs(1); 2]);
}

#[test]
fn fibonacci_follows_the_sequence_then_caps() {
    #[retry(fibonacci(base = "100ms", max = "1s"), attempts = 8, jitter = "none", sleep = record)]
    fn fib() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(fib(), Err(8));
    let expected = [100, 100, 200, 300, 500, 800, 1000].map(ms);
    assert_eq!(sleeps(), expected);
}

#[test]
fn decorrelated_stays_between_base_and_three_times_the_previous_sleep_under_max() {
    #[retry(decorrelated(base = "10ms", max = "500ms"), attempts = 12, sleep = record)]
    fn decorrelated() -> Result<(), u32> {
        Err(next_call())
    }
    let (base, max) = (ms(10), ms(500));
    let mut all = Vec::new();
    for _ in 0..50 {
        fresh();
        assert_eq!(decorrelated(), Err(12));
        let s = sleeps();
        assert_eq!(s.len(), 11);
        let mut previous = base;
        for &d in &s {
            // No extra jitter by default: never below `base`.
            assert!(d >= base, "{d:?} below base in {s:?}");
            assert!(d <= max, "{d:?} above max in {s:?}");
            assert!(d <= (previous * 3).min(max), "{d:?} above 3 x {previous:?}");
            previous = d;
        }
        all.extend(s);
    }
    // Random: the sleeps are not all the same, and they reach the cap.
    assert!(all.iter().any(|d| *d != all[0]));
    assert!(all.contains(&max));
}

#[test]
fn immediate_retries_without_waiting() {
    #[retry(immediate, attempts = 4, sleep = record)]
    fn immediate() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(immediate(), Err(4));
    assert_eq!(sleeps(), [Duration::ZERO; 3]);
}

#[test]
fn no_arguments_means_three_calls_exponential_from_100ms_with_full_jitter() {
    #[retry(sleep = record)]
    fn defaults() -> Result<(), u32> {
        Err(next_call())
    }
    let mut firsts = Vec::new();
    for _ in 0..100 {
        fresh();
        assert_eq!(defaults(), Err(3));
        let s = sleeps();
        assert_eq!(s.len(), 2);
        assert!(s[0] <= ms(100), "{s:?}");
        assert!(s[1] <= ms(200), "{s:?}");
        firsts.push(s[0]);
    }
    // Full jitter: uniform in [0, 100ms], so not stuck at 100 ms.
    assert!(firsts.iter().any(|d| *d < ms(50)), "{firsts:?}");
    assert!(firsts.iter().any(|d| *d > ms(50)), "{firsts:?}");
}

// ---------------------------------------------------------------------------
// attempts
// ---------------------------------------------------------------------------

#[test]
fn attempts_one_calls_once_and_never_sleeps() {
    #[retry(immediate, attempts = 1, sleep = record)]
    fn once() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(once(), Err(1));
    assert_eq!(calls(), 1);
    assert!(sleeps().is_empty());
}

#[test]
fn attempts_counts_calls_including_the_first() {
    #[retry(constant("10ms"), attempts = 5, jitter = "none", sleep = record)]
    fn five() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(five(), Err(5));
    assert_eq!(calls(), 5);
    assert_eq!(sleeps().len(), 4);
}

#[test]
fn unlimited_attempts_retry_until_when_says_stop() {
    #[retry(immediate, attempts = unlimited, when = |e| *e < 50, sleep = record)]
    fn until_fifty() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(until_fifty(), Err(50));
    assert_eq!(calls(), 50);
    assert_eq!(sleeps().len(), 49);
}

#[test]
fn the_largest_attempt_count_compiles_and_runs() {
    #[retry(immediate, attempts = 4294967295, when = |e| *e < 10, sleep = record)]
    fn huge() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(huge(), Err(10));
}

#[test]
fn a_success_after_failures_is_returned_and_ends_the_retries() {
    #[retry(constant("5ms"), attempts = 10, jitter = "none", sleep = record)]
    fn third_time_lucky() -> Result<String, u32> {
        let n = next_call();
        if n < 3 {
            Err(n)
        } else {
            Ok(format!("ok on call {n}"))
        }
    }
    fresh();
    assert_eq!(third_time_lucky(), Ok("ok on call 3".to_owned()));
    assert_eq!(calls(), 3);
    assert_eq!(sleeps(), [ms(5), ms(5)]);
}

#[test]
fn a_success_at_once_never_sleeps() {
    #[retry(sleep = record)]
    fn works() -> Result<u32, u32> {
        Ok(next_call())
    }
    fresh();
    assert_eq!(works(), Ok(1));
    assert!(sleeps().is_empty());
}

// ---------------------------------------------------------------------------
// jitter
// ---------------------------------------------------------------------------

#[test]
fn full_jitter_draws_between_zero_and_the_delay() {
    #[retry(constant("1s"), jitter = "full", attempts = 201, sleep = record)]
    fn full() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(full(), Err(201));
    let s = sleeps();
    assert_eq!(s.len(), 200);
    assert!(s.iter().all(|d| *d <= secs(1)), "{s:?}");
    assert!(s.iter().any(|d| *d < ms(250)), "{s:?}");
    assert!(s.iter().any(|d| *d > ms(750)), "{s:?}");
}

#[test]
fn equal_jitter_draws_between_half_the_delay_and_the_delay() {
    #[retry(constant("1s"), jitter = "equal", attempts = 201, sleep = record)]
    fn equal() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(equal(), Err(201));
    let s = sleeps();
    assert_eq!(s.len(), 200);
    assert!(s.iter().all(|d| *d >= ms(500) && *d <= secs(1)), "{s:?}");
    assert!(s.iter().any(|d| *d < ms(600)), "{s:?}");
    assert!(s.iter().any(|d| *d > ms(900)), "{s:?}");
}

#[test]
fn half_is_an_alias_of_equal_jitter() {
    #[retry(constant("1s"), jitter = "half", attempts = 201, sleep = record)]
    fn half() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(half(), Err(201));
    let s = sleeps();
    assert!(s.iter().all(|d| *d >= ms(500) && *d <= secs(1)), "{s:?}");
    assert!(s.iter().any(|d| *d < ms(600)), "{s:?}");
    assert!(s.iter().any(|d| *d > ms(900)), "{s:?}");
}

#[test]
fn no_jitter_sleeps_exactly_the_delay() {
    #[retry(linear(base = "7ms"), jitter = "none", attempts = 4, sleep = record)]
    fn none() -> Result<(), u32> {
        Err(next_call())
    }
    for _ in 0..20 {
        fresh();
        assert_eq!(none(), Err(4));
        assert_eq!(sleeps(), [ms(7), ms(14), ms(21)]);
    }
}

#[test]
fn scattered_jitter_draws_within_the_ratio_around_the_delay() {
    #[retry(exponential(base = "1s", max = "10s"), jitter = scattered(0.5), attempts = 2, sleep = record)]
    fn scattered() -> Result<(), u32> {
        Err(next_call())
    }
    let s = sample(200, scattered);
    assert!(s.iter().all(|d| *d >= ms(500) && *d <= ms(1500)), "{s:?}");
    assert!(s.iter().any(|d| *d < ms(750)), "{s:?}");
    assert!(s.iter().any(|d| *d > ms(1250)), "{s:?}");
}

#[test]
fn scattered_jitter_on_constant_spreads_on_both_sides_of_the_delay() {
    #[retry(constant("1s"), jitter = scattered(0.25), attempts = 201, sleep = record)]
    fn scattered() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(scattered(), Err(201));
    let s = sleeps();
    assert!(s.iter().all(|d| *d >= ms(750) && *d <= ms(1250)), "{s:?}");
    assert!(s.iter().any(|d| *d < ms(900)), "{s:?}");
    assert!(s.iter().any(|d| *d > ms(1100)), "{s:?}");
}

#[test]
fn no_jittered_sleep_exceeds_max() {
    #[retry(exponential(base = "100ms", max = "300ms"), jitter = scattered(1.0), attempts = 60, sleep = record)]
    fn scattered() -> Result<(), u32> {
        Err(next_call())
    }
    #[retry(exponential(base = "100ms", max = "300ms"), jitter = "full", attempts = 60, sleep = record)]
    fn full() -> Result<(), u32> {
        Err(next_call())
    }
    #[retry(fibonacci(base = "100ms", max = "300ms"), jitter = "equal", attempts = 60, sleep = record)]
    fn equal() -> Result<(), u32> {
        Err(next_call())
    }
    for f in [scattered, full, equal] {
        fresh();
        assert_eq!(f(), Err(60));
        let s = sleeps();
        assert_eq!(s.len(), 59);
        assert!(s.iter().all(|d| *d <= ms(300)), "{s:?}");
    }
}

// ---------------------------------------------------------------------------
// max_elapsed (async, on tokio's paused clock: the default async sleep is
// `tokio::time::sleep`, and the clock follows virtual time)
// ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn max_elapsed_allows_a_sleep_that_ends_exactly_at_the_deadline() {
    #[retry(constant("1s"), attempts = unlimited, jitter = "none", max_elapsed = "3s")]
    async fn always_fails() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(always_fails().await, Err(4));
    // Sleeps end at 1 s, 2 s and 3 s; a fourth would end at 4 s.
    assert_eq!(start.elapsed(), secs(3));
}

#[tokio::test(start_paused = true)]
async fn max_elapsed_never_starts_a_sleep_that_would_end_past_the_deadline() {
    #[retry(exponential(base = "1s", max = "1h"), attempts = unlimited, jitter = "none", max_elapsed = "10s")]
    async fn always_fails() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(always_fails().await, Err(4));
    // 1 + 2 + 4 = 7 s; the next sleep, 8 s, would end at 15 s: give up at 7 s.
    assert_eq!(start.elapsed(), secs(7));
}

#[tokio::test(start_paused = true)]
async fn max_elapsed_counts_the_time_spent_in_attempts() {
    #[retry(constant("1s"), attempts = unlimited, jitter = "none", max_elapsed = "3s")]
    async fn slow_failure() -> Result<(), u32> {
        tokio::time::sleep(ms(400)).await;
        Err(next_call())
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(slow_failure().await, Err(3));
    // Attempts end at 0.4, 1.8 and 3.2 s; sleeps end at 1.4 and 2.8 s; a
    // third would end at 4.2 s.
    assert_eq!(start.elapsed(), ms(3200));
}

#[tokio::test(start_paused = true)]
async fn attempts_still_bound_a_call_with_a_distant_deadline() {
    #[retry(constant("1s"), attempts = 3, jitter = "none", max_elapsed = "1h")]
    async fn always_fails() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(always_fails().await, Err(3));
    assert_eq!(start.elapsed(), secs(2));
}

#[tokio::test(start_paused = true)]
async fn max_elapsed_does_not_end_a_call_that_succeeds_in_time() {
    #[retry(constant("1s"), attempts = unlimited, jitter = "none", max_elapsed = "5s")]
    async fn third_time_lucky() -> Result<u32, u32> {
        let n = next_call();
        if n < 3 { Err(n) } else { Ok(n) }
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(third_time_lucky().await, Ok(3));
    assert_eq!(start.elapsed(), secs(2));
}

// ---------------------------------------------------------------------------
// when
// ---------------------------------------------------------------------------

fn is_transient(e: &Failure) -> bool {
    e.is_transient()
}

/// Transient on the first two calls, permanent on the third.
fn transient_twice_then_permanent() -> Failure {
    let n = next_call();
    if n < 3 {
        Failure::transient(n)
    } else {
        Failure::permanent(n)
    }
}

#[test]
fn when_path_returning_false_stops_at_once() {
    #[retry(immediate, attempts = 10, when = is_transient, sleep = record)]
    fn classify() -> Result<(), Failure> {
        Err(transient_twice_then_permanent())
    }
    fresh();
    assert_eq!(classify(), Err(Failure::permanent(3)));
    assert_eq!(calls(), 3);
    assert_eq!(sleeps().len(), 2);
}

#[test]
fn when_closure_with_an_untyped_parameter_decides_per_error() {
    #[retry(immediate, attempts = 10, when = |e| e.is_transient(), sleep = record)]
    fn classify() -> Result<(), Failure> {
        Err(transient_twice_then_permanent())
    }
    fresh();
    assert_eq!(classify(), Err(Failure::permanent(3)));
    assert_eq!(calls(), 3);
    assert_eq!(sleeps().len(), 2);
}

#[test]
fn when_closure_with_a_typed_parameter_decides_per_error() {
    #[retry(immediate, attempts = 10, when = |e: &Failure| e.transient, sleep = record)]
    fn classify() -> Result<(), Failure> {
        Err(transient_twice_then_permanent())
    }
    fresh();
    assert_eq!(classify(), Err(Failure::permanent(3)));
    assert_eq!(calls(), 3);
}

#[test]
fn when_is_asked_about_every_failure_but_not_about_successes() {
    thread_local!(static ASKED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) });
    fn ask(e: &u32) -> bool {
        ASKED.with_borrow_mut(|a| a.push(*e));
        true
    }
    #[retry(immediate, attempts = 5, when = ask, sleep = record)]
    fn lucky() -> Result<u32, u32> {
        let n = next_call();
        if n < 3 { Err(n) } else { Ok(n) }
    }
    fresh();
    assert_eq!(lucky(), Ok(3));
    assert_eq!(ASKED.take(), [1, 2]);
}

#[test]
fn when_true_still_stops_at_the_attempt_limit() {
    #[retry(immediate, attempts = 3, when = |_| true, sleep = record)]
    fn always_fails() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(always_fails(), Err(3));
}

// A plain fn whose only hook is a `when` that borrows nothing of the
// function's (a path, `Self::f`, a closure of its own parameter) runs in
// the runtime's loop, with the verdict beside the attempts; one that names
// a parameter keeps the loop of its own. Both decide every verdict alike.
// (No `sleep =` here: that argument takes the loop of the function's own.)

#[test]
fn a_plain_fn_when_path_in_the_runtime_loop_decides_per_error() {
    #[retry(immediate, attempts = 10, when = is_transient)]
    fn classify() -> Result<(), Failure> {
        Err(transient_twice_then_permanent())
    }
    fresh();
    assert_eq!(classify(), Err(Failure::permanent(3)));
    assert_eq!(calls(), 3);
}

#[test]
fn a_plain_fn_when_closure_with_a_deadline_decides_per_error() {
    // (`max_elapsed`: the runtime's loop from a start the function builds.)
    #[retry(immediate, attempts = unlimited, max_elapsed = "1h", when = |e: &Failure| e.transient)]
    fn classify() -> Result<(), Failure> {
        Err(transient_twice_then_permanent())
    }
    fresh();
    assert_eq!(classify(), Err(Failure::permanent(3)));
    assert_eq!(calls(), 3);
}

#[test]
fn a_plain_fn_when_in_the_runtime_loop_takes_every_decision() {
    #[retry(immediate, attempts = 10, when = |e| match *e {
        1 => Decision::RetryAfter(Duration::ZERO),
        2 => Decision::Throttled,
        3 => Decision::Retry,
        _ => Decision::Stop,
    })]
    fn verdicts() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(verdicts(), Err(4));
    assert_eq!(calls(), 4);

    // `true` still stops at the attempt limit; an `Ok` is never asked about.
    #[retry(immediate, attempts = 3, when = |_| true)]
    fn always_fails() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(always_fails(), Err(3));
    #[retry(immediate, attempts = 5, when = |e| *e != 0)]
    fn lucky() -> Result<u32, u32> {
        let n = next_call();
        if n < 3 { Err(n) } else { Ok(n) }
    }
    fresh();
    assert_eq!(lucky(), Ok(3));
}

#[test]
fn a_method_when_self_path_beside_a_body_that_mutates_self() {
    struct Counter {
        n: u32,
    }
    impl Counter {
        fn retryable(e: &u32) -> bool {
            *e < 10
        }
        #[retry(immediate, attempts = 5, when = Self::retryable)]
        fn bump(&mut self) -> Result<u32, u32> {
            self.n += 1;
            if self.n < 3 { Err(self.n) } else { Ok(self.n) }
        }
        #[retry(immediate, attempts = 5, when = Self::retryable)]
        fn bump_past_ten(&mut self) -> Result<u32, u32> {
            self.n += 4;
            Err(self.n)
        }
    }
    let mut counter = Counter { n: 0 };
    assert_eq!(counter.bump(), Ok(3));
    // 7, then 11: not retryable.
    assert_eq!(counter.bump_past_ten(), Err(11));
}

#[test]
fn a_plain_fn_when_that_names_a_parameter_keeps_its_own_loop() {
    #[retry(immediate, attempts = 10, when = |e| *e < limit)]
    fn below(limit: u32, log: &mut Vec<u32>) -> Result<(), u32> {
        let n = next_call();
        log.push(n);
        Err(n)
    }
    fresh();
    let mut log = Vec::new();
    assert_eq!(below(4, &mut log), Err(4));
    assert_eq!(log, [1, 2, 3, 4]);
}

#[test]
fn when_decision_stop_returns_the_error_at_once() {
    #[retry(immediate, attempts = 10, when = |_| Decision::Stop, sleep = record)]
    fn stop() -> Result<(), Failure> {
        Err(Failure::transient(next_call()))
    }
    fresh();
    assert_eq!(stop(), Err(Failure::transient(1)));
    assert_eq!(calls(), 1);
    assert!(sleeps().is_empty());
}

#[test]
fn when_decision_retry_follows_the_schedule() {
    #[retry(linear(base = "10ms"), jitter = "none", attempts = 4, when = |_| Decision::Retry, sleep = record)]
    fn retry_all() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(retry_all(), Err(4));
    assert_eq!(sleeps(), [ms(10), ms(20), ms(30)]);
}

fn classify(e: &Failure) -> Decision {
    match (e.transient, e.attempt) {
        (false, _) => Decision::Stop,
        (true, 1) => Decision::RetryAfter(ms(1234)),
        (true, _) => Decision::Retry,
    }
}

#[test]
fn when_path_returning_a_decision_mixes_retry_after_retry_and_stop() {
    #[retry(exponential(base = "100ms"), jitter = "none", attempts = 10, when = classify, sleep = record)]
    fn mixed() -> Result<(), Failure> {
        Err(transient_twice_then_permanent())
    }
    fresh();
    assert_eq!(mixed(), Err(Failure::permanent(3)));
    // Call 1: RetryAfter(1234ms); call 2: Retry, the strategy's delay; call
    // 3: Stop.
    let s = sleeps();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0], ms(1234));
    assert!(s[1] == ms(100) || s[1] == ms(200), "{s:?}");
}

// An `async fn` whose policy is a type keeps only a `Carried` between
// attempts, `when` or not: each verdict steps it as the whole state would
// (on tokio's paused clock, the default sleep's; each call notes when it
// began).

thread_local! {
    static CALLED_AT: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
}

/// `next_call()`, noting the virtual time since `start`.
fn next_call_at(start: tokio::time::Instant) -> u32 {
    CALLED_AT.with_borrow_mut(|at| at.push(start.elapsed()));
    next_call()
}

/// When each call began, since `start`; clears the log.
fn called_at() -> Vec<Duration> {
    CALLED_AT.take()
}

/// Call 1: `RetryAfter(5s)`; 2: `Retry`; 3: `RetryAfter(500ms)`; 4:
/// `Retry`; then `Stop`.
fn server_then_schedule_then_stop(e: &u32) -> Decision {
    match e {
        1 => Decision::RetryAfter(secs(5)),
        3 => Decision::RetryAfter(ms(500)),
        2 | 4 => Decision::Retry,
        _ => Decision::Stop,
    }
}

#[tokio::test(start_paused = true)]
async fn async_when_retry_after_leaves_the_schedule_where_it_was_and_stop_ends() {
    #[retry(exponential(base = "1s", max = "1h"), jitter = "none", attempts = 10, when = server_then_schedule_then_stop)]
    async fn mixed(start: tokio::time::Instant) -> Result<(), u32> {
        Err(next_call_at(start))
    }
    // The same, with the policy a value (`retry_after_max`, here the
    // default): a loop that keeps a whole `RetryState` (stepped by
    // `after_decided_recorded`).
    #[retry(exponential(base = "1s", max = "1h"), jitter = "none", attempts = 10, retry_after_max = "5m", when = server_then_schedule_then_stop)]
    async fn mixed_in_general(start: tokio::time::Instant) -> Result<(), u32> {
        Err(next_call_at(start))
    }
    let (compact, general) = (
        mixed(tokio::time::Instant::now()),
        mixed_in_general(tokio::time::Instant::now()),
    );
    assert!(
        size_of_val(&compact) + 100 < size_of_val(&general),
        "the compact path keeps a `Carried`: {} against {} bytes",
        size_of_val(&compact),
        size_of_val(&general)
    );
    drop((compact, general));
    for twin in 0..2 {
        fresh();
        let start = tokio::time::Instant::now();
        let result = if twin == 0 {
            mixed(start).await
        } else {
            mixed_in_general(start).await
        };
        assert_eq!(result, Err(5));
        // 5 s (the server's); 1 s (retry 1: the `RetryAfter` was not one);
        // 0.5 s; 2 s (retry 2); then `Stop`, at once.
        assert_eq!(called_at(), [ms(0), ms(5000), ms(6000), ms(6500), ms(8500)]);
        assert_eq!(start.elapsed(), ms(8500));
    }
}

#[tokio::test(start_paused = true)]
async fn async_when_retry_after_past_its_limit_gives_up_at_once() {
    // (The default limit, five minutes: a `retry_after_max` would make the
    // policy a value, off the compact path.)
    #[retry(constant("1s"), jitter = "none", attempts = 10, when = |e: &u32| if *e < 3 { Decision::RetryAfter(secs(300)) } else { Decision::RetryAfter(secs(301)) })]
    async fn impatient(start: tokio::time::Instant) -> Result<(), u32> {
        Err(next_call_at(start))
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(impatient(start).await, Err(3));
    assert_eq!(called_at(), [secs(0), secs(300), secs(600)]);
    assert_eq!(start.elapsed(), secs(600));
}

#[tokio::test(start_paused = true)]
async fn async_when_retry_after_still_counts_toward_the_attempt_limit() {
    #[retry(exponential(base = "1s"), jitter = "none", attempts = 4, when = |e: &u32| if *e % 2 == 1 { Decision::RetryAfter(ms(300)) } else { Decision::Throttled })]
    async fn alternating(start: tokio::time::Instant) -> Result<(), u32> {
        Err(next_call_at(start))
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(alternating(start).await, Err(4));
    // 0.3 s; 1 s (`Throttled`, with no throttle, a plain retry: retry 1);
    // 0.3 s; then the fourth call is the last.
    assert_eq!(called_at(), [ms(0), ms(300), ms(1300), ms(1600)]);
}

#[tokio::test(start_paused = true)]
async fn async_when_bool_retries_the_transient_and_returns_the_permanent() {
    #[retry(exponential(base = "1s"), jitter = "none", attempts = 10, when = is_transient)]
    async fn flaky(start: tokio::time::Instant) -> Result<(), Failure> {
        CALLED_AT.with_borrow_mut(|at| at.push(start.elapsed()));
        Err(transient_twice_then_permanent())
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(flaky(start).await, Err(Failure::permanent(3)));
    assert_eq!(called_at(), [secs(0), secs(1), secs(3)]);
    // And the attempt limit, when every error is transient.
    #[retry(exponential(base = "1s"), jitter = "none", attempts = 3, when = |_: &u32| true)]
    async fn always(start: tokio::time::Instant) -> Result<(), u32> {
        Err(next_call_at(start))
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(always(start).await, Err(3));
    assert_eq!(called_at(), [secs(0), secs(1), secs(3)]);
}

#[test]
fn retry_after_waits_exactly_its_delay_uncapped_and_unjittered() {
    #[retry(exponential(base = "100ms", max = "200ms"), jitter = "full", attempts = 3, when = |_| Decision::RetryAfter(Duration::from_secs(5)), sleep = record)]
    fn server_says_wait() -> Result<(), u32> {
        Err(next_call())
    }
    for _ in 0..10 {
        fresh();
        assert_eq!(server_says_wait(), Err(3));
        // Bound by `attempts`, but neither capped at 200 ms nor jittered.
        assert_eq!(sleeps(), [secs(5), secs(5)]);
    }
}

#[test]
fn retry_after_that_would_cross_max_elapsed_gives_up_without_sleeping() {
    #[retry(immediate, attempts = unlimited, max_elapsed = "1s", when = |_| Decision::RetryAfter(Duration::from_secs(2)), sleep = record)]
    fn too_long() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(too_long(), Err(1));
    assert!(sleeps().is_empty());
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_bounded_by_max_elapsed() {
    #[retry(immediate, attempts = unlimited, max_elapsed = "5s", when = |_| Decision::RetryAfter(Duration::from_secs(2)))]
    async fn server_says_wait() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(server_says_wait().await, Err(3));
    // Waits end at 2 s and 4 s; a third would end at 6 s.
    assert_eq!(start.elapsed(), secs(4));
}

#[tokio::test(start_paused = true)]
async fn retry_after_past_the_deadline_gives_up_at_once() {
    #[retry(constant("10ms"), attempts = unlimited, max_elapsed = "1s", when = |_| Decision::RetryAfter(Duration::from_millis(1001)))]
    async fn too_long() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(too_long().await, Err(1));
    assert_eq!(start.elapsed(), Duration::ZERO);
}

// ---------------------------------------------------------------------------
// on_retry
// ---------------------------------------------------------------------------

fn log_retry(e: &u32, ev: &RetryEvent) {
    EVENTS.with_borrow_mut(|log| {
        log.push(Event::OnRetry {
            error: *e,
            attempt: ev.attempt,
            delay: ev.delay,
        });
    });
}

#[test]
fn on_retry_path_runs_once_per_retry_before_the_sleep() {
    #[retry(exponential(base = "100ms"), jitter = "none", attempts = 3, on_retry = log_retry, sleep = record)]
    fn always_fails() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(always_fails(), Err(3));
    use Event::*;
    assert_eq!(
        events(),
        [
            Call(1),
            OnRetry {
                error: 1,
                attempt: 1,
                delay: ms(100)
            },
            Slept(ms(100)),
            Call(2),
            OnRetry {
                error: 2,
                attempt: 2,
                delay: ms(200)
            },
            Slept(ms(200)),
            // No retry after the last attempt, so no `on_retry`.
            Call(3),
        ]
    );
}

#[test]
fn on_retry_closure_with_untyped_parameters_sees_the_jittered_delay_about_to_be_slept() {
    #[retry(exponential(base = "100ms"), jitter = "full", attempts = 5, on_retry = |e, ev| EVENTS.with_borrow_mut(|log| log.push(Event::OnRetry { error: *e, attempt: ev.attempt, delay: ev.delay })), sleep = record)]
    fn always_fails() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(always_fails(), Err(5));
    let log = events();
    let announced: Vec<Duration> = log
        .iter()
        .filter_map(|e| match e {
            Event::OnRetry { delay, .. } => Some(*delay),
            _ => None,
        })
        .collect();
    let slept: Vec<Duration> = log
        .iter()
        .filter_map(|e| match e {
            Event::Slept(d) => Some(*d),
            _ => None,
        })
        .collect();
    assert_eq!(announced.len(), 4);
    assert_eq!(announced, slept);
    let attempts: Vec<u32> = log
        .iter()
        .filter_map(|e| match e {
            Event::OnRetry { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(attempts, [1, 2, 3, 4]);
}

#[test]
fn on_retry_is_not_called_on_success_nor_when_stopping() {
    #[retry(immediate, on_retry = log_retry, sleep = record)]
    fn works() -> Result<(), u32> {
        next_call();
        Ok(())
    }
    #[retry(immediate, when = |_| false, on_retry = log_retry, sleep = record)]
    fn permanent() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(works(), Ok(()));
    assert_eq!(events(), [Event::Call(1)]);
    fresh();
    assert_eq!(permanent(), Err(1));
    assert_eq!(events(), [Event::Call(1)]);
}

#[tokio::test(start_paused = true)]
async fn on_retry_reports_the_elapsed_time_since_the_call_began() {
    thread_local!(static SEEN: RefCell<Vec<RetryEvent>> = const { RefCell::new(Vec::new()) });
    #[retry(constant("1s"), jitter = "none", attempts = 4, on_retry = |_, ev| SEEN.with_borrow_mut(|s| s.push(*ev)))]
    async fn slow_failure() -> Result<(), u32> {
        tokio::time::sleep(ms(250)).await;
        Err(next_call())
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(slow_failure().await, Err(4));
    assert_eq!(start.elapsed(), ms(4 * 250 + 3 * 1000));
    let seen: Vec<(u32, Duration, Duration)> = SEEN
        .take()
        .iter()
        .map(|ev| (ev.attempt, ev.delay, ev.elapsed))
        .collect();
    assert_eq!(
        seen,
        [
            (1, secs(1), ms(250)),
            (2, secs(1), ms(1500)),
            (3, secs(1), ms(2750)),
        ]
    );
}

// ---------------------------------------------------------------------------
// sleep
// ---------------------------------------------------------------------------

#[test]
fn sleep_path_replaces_the_blocking_sleep() {
    // With `std::thread::sleep` this would block for two hours.
    #[retry(constant("1h"), jitter = "none", attempts = 3, sleep = record)]
    fn patient() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(patient(), Err(3));
    assert_eq!(sleeps(), [secs(3600); 2]);
}

#[tokio::test(start_paused = true)]
async fn sleep_async_fn_path_replaces_tokio_sleep() {
    #[retry(constant("1h"), jitter = "none", attempts = 3, sleep = record_async)]
    async fn patient() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(patient().await, Err(3));
    assert_eq!(sleeps(), [secs(3600); 2]);
    // The injected sleep does not touch tokio's timer: no virtual time passed.
    assert_eq!(start.elapsed(), Duration::ZERO);
}

/// A plain fn returning a future, rather than an `async fn`.
fn ready_sleep(d: Duration) -> std::future::Ready<()> {
    record(d);
    std::future::ready(())
}

#[tokio::test(start_paused = true)]
async fn sleep_path_to_a_fn_returning_a_future_is_awaited() {
    #[retry(linear(base = "1s"), jitter = "none", attempts = 3, sleep = ready_sleep)]
    async fn patient() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(patient().await, Err(3));
    assert_eq!(sleeps(), [secs(1), secs(2)]);
}

#[tokio::test(start_paused = true)]
async fn default_async_sleep_is_tokio_sleep_on_virtual_time() {
    #[retry(linear(base = "1s"), jitter = "none", attempts = 4)]
    async fn always_fails() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    let start = tokio::time::Instant::now();
    assert_eq!(always_fails().await, Err(4));
    assert_eq!(start.elapsed(), secs(1 + 2 + 3));
}

// ---------------------------------------------------------------------------
// policy
// ---------------------------------------------------------------------------

const FAST: Policy = Policy::constant(Duration::from_millis(10))
    .jitter(Jitter::None)
    .attempts(4);

static STEADY: Policy = Policy::linear(Duration::from_millis(5))
    .jitter(Jitter::None)
    .attempts(3);

#[test]
fn policy_from_a_const() {
    #[retry(policy = FAST, sleep = record)]
    fn with_const() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(with_const(), Err(4));
    assert_eq!(sleeps(), [ms(10); 3]);
}

#[test]
fn policy_from_a_reference_to_a_static() {
    #[retry(policy = &STEADY, sleep = record)]
    fn with_static_ref() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(with_static_ref(), Err(3));
    assert_eq!(sleeps(), [ms(5), ms(10)]);
}

#[test]
fn policy_expression_may_use_the_arguments() {
    #[retry(policy = Policy::immediate().attempts(n), sleep = record)]
    fn with_arg(n: u32) -> Result<(), u32> {
        Err(next_call())
    }
    #[retry(policy = policy, sleep = record)]
    fn with_policy_arg(policy: &Policy) -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(with_arg(2), Err(2));
    fresh();
    assert_eq!(with_arg(7), Err(7));
    fresh();
    let p = Policy::exponential(ms(1)).jitter(Jitter::None).attempts(4);
    assert_eq!(with_policy_arg(&p), Err(4));
    assert_eq!(sleeps(), [ms(1), ms(2), ms(4)]);
}

#[test]
fn policy_expression_is_evaluated_once_per_call() {
    thread_local!(static BUILT: Cell<u32> = const { Cell::new(0) });
    fn build() -> Policy {
        BUILT.set(BUILT.get() + 1);
        Policy::immediate().attempts(5)
    }
    #[retry(policy = build(), sleep = record)]
    fn built_each_call() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(built_each_call(), Err(5));
    assert_eq!(BUILT.get(), 1);
    assert_eq!(built_each_call(), Err(10));
    assert_eq!(BUILT.get(), 2);
}

struct Client {
    policy: Policy,
}

impl Client {
    #[retry(policy = self.policy, sleep = record)]
    fn by_value(&self) -> Result<(), u32> {
        Err(next_call())
    }

    #[retry(policy = &self.policy, sleep = record)]
    fn by_ref(&self) -> Result<(), u32> {
        Err(next_call())
    }
}

#[test]
fn policy_from_self_in_a_method() {
    let client = Client {
        policy: Policy::fibonacci(ms(10)).jitter(Jitter::None).attempts(5),
    };
    fresh();
    assert_eq!(client.by_value(), Err(5));
    assert_eq!(sleeps(), [ms(10), ms(10), ms(20), ms(30)]);
    fresh();
    assert_eq!(client.by_ref(), Err(5));
    assert_eq!(sleeps(), [ms(10), ms(10), ms(20), ms(30)]);
}

/// A user-defined strategy: 1 ms, 2 ms, 3 ms, ...
struct Steps;

impl backoff_runtime::Strategy for Steps {
    fn delay(&self, retry: u32, _previous: Option<Duration>, _rng: &mut JitterRng) -> Duration {
        ms(u64::from(retry))
    }
}

static CUSTOM: Policy<Steps> = Policy::from_strategy(Steps).attempts(4);

#[test]
fn policy_over_a_custom_strategy() {
    #[retry(policy = &CUSTOM, sleep = record)]
    fn custom() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(custom(), Err(4));
    assert_eq!(sleeps(), [ms(1), ms(2), ms(3)]);
}

#[test]
fn policy_keeps_its_attempts_and_max_elapsed() {
    static DEADLINE: Policy = Policy::constant(Duration::from_secs(1))
        .jitter(Jitter::None)
        .unlimited_attempts()
        .max_elapsed(Duration::from_millis(500));
    static TWO: Policy = Policy::immediate().attempts(2);
    #[retry(policy = &DEADLINE, sleep = record)]
    fn too_slow() -> Result<(), u32> {
        Err(next_call())
    }
    #[retry(policy = TWO, sleep = record)]
    fn two() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    // A 1 s sleep would end past the 500 ms deadline: give up at once.
    assert_eq!(too_slow(), Err(1));
    assert!(sleeps().is_empty());
    fresh();
    assert_eq!(two(), Err(2));
}

// ---------------------------------------------------------------------------
// crate
// ---------------------------------------------------------------------------

use backoff_runtime as br;

mod reexport {
    pub(crate) use backoff_runtime as rt;
}

#[test]
fn crate_path_to_a_renamed_runtime() {
    #[br::retry(crate = "br", immediate, attempts = 3, sleep = record)]
    fn renamed() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(renamed(), Err(3));
}

#[test]
fn crate_path_to_a_reexported_runtime() {
    #[reexport::rt::retry(crate = "crate::reexport::rt", linear(base = "1ms"), jitter = "none", attempts = 3, sleep = record)]
    fn reexported() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(reexported(), Err(3));
    assert_eq!(sleeps(), [ms(1), ms(2)]);
}

#[test]
fn crate_path_spelled_as_the_default() {
    #[retry(crate = "::backoff_runtime", immediate, attempts = 2, sleep = record)]
    fn explicit() -> Result<(), u32> {
        Err(next_call())
    }
    fresh();
    assert_eq!(explicit(), Err(2));
}

// ---------------------------------------------------------------------------
// The body: errors, `?`, `return`, panics
// ---------------------------------------------------------------------------

/// An error that is neither `Clone` nor `Copy`.
#[derive(Debug, PartialEq)]
struct Detailed {
    attempt: u32,
    message: String,
    source: Option<Box<Detailed>>,
}

#[test]
fn giving_up_returns_the_last_error_unchanged() {
    #[retry(immediate, attempts = 4, sleep = record)]
    fn always_fails() -> Result<(), Detailed> {
        let n = next_call();
        Err(Detailed {
            attempt: n,
            message: format!("failure number {n}"),
            source: Some(Box::new(Detailed {
                attempt: 0,
                message: "root".to_owned(),
                source: None,
            })),
        })
    }
    fresh();
    let e = always_fails().unwrap_err();
    assert_eq!(e.attempt, 4);
    assert_eq!(e.message, "failure number 4");
    assert_eq!(e.source.unwrap().message, "root");
}

#[derive(Debug, PartialEq)]
enum ParseFailure {
    Number(String),
}

impl From<std::num::ParseIntError> for ParseFailure {
    fn from(e: std::num::ParseIntError) -> Self {
        ParseFailure::Number(e.to_string())
    }
}

#[test]
fn question_mark_ends_just_that_attempt_with_the_converted_error() {
    thread_local!(static PAST_THE_QUESTION_MARK: Cell<u32> = const { Cell::new(0) });
    #[retry(immediate, attempts = 5, sleep = record)]
    fn parse() -> Result<u32, ParseFailure> {
        let input = if next_call() < 3 { "nope" } else { "42" };
        let n: u32 = input.parse()?;
        PAST_THE_QUESTION_MARK.set(PAST_THE_QUESTION_MARK.get() + 1);
        Ok(n)
    }
    #[retry(immediate, attempts = 2, sleep = record)]
    fn never_parses() -> Result<u32, ParseFailure> {
        next_call();
        Ok("nope".parse::<u32>()?)
    }
    fresh();
    assert_eq!(parse(), Ok(42));
    assert_eq!(calls(), 3);
    assert_eq!(PAST_THE_QUESTION_MARK.get(), 1);
    fresh();
    assert_eq!(
        never_parses(),
        Err(ParseFailure::Number(
            "invalid digit found in string".to_owned()
        ))
    );
    assert_eq!(calls(), 2);
}

#[test]
fn return_ends_just_that_attempt() {
    thread_local!(static PAST_THE_RETURN: Cell<u32> = const { Cell::new(0) });
    #[retry(immediate, attempts = 5, sleep = record)]
    fn early() -> Result<&'static str, u32> {
        let n = next_call();
        if n == 1 {
            return Err(n);
        }
        if n == 2 {
            PAST_THE_RETURN.set(PAST_THE_RETURN.get() + 1);
            return Err(n);
        }
        if n == 3 {
            return Ok("early success");
        }
        PAST_THE_RETURN.set(100);
        Ok("late success")
    }
    fresh();
    assert_eq!(early(), Ok("early success"));
    assert_eq!(calls(), 3);
    assert_eq!(PAST_THE_RETURN.get(), 1);
}

#[test]
fn a_panic_on_the_first_attempt_propagates_and_is_not_retried() {
    #[retry(immediate, attempts = 5, sleep = record)]
    fn panics() -> Result<(), u32> {
        next_call();
        panic!("boom");
    }
    fresh();
    let caught = catch_unwind(panics);
    let payload = caught.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
    assert_eq!(calls(), 1);
    assert!(sleeps().is_empty());
}

#[test]
fn a_panic_after_a_failure_propagates_and_is_not_retried() {
    #[retry(immediate, attempts = 5, on_retry = log_retry, sleep = record)]
    fn fails_then_panics() -> Result<(), u32> {
        let n = next_call();
        if n == 2 {
            panic!("boom on call {n}");
        }
        Err(n)
    }
    fresh();
    let caught = catch_unwind(AssertUnwindSafe(fails_then_panics));
    assert!(caught.is_err());
    assert_eq!(calls(), 2);
    assert_eq!(
        events(),
        [
            Event::Call(1),
            Event::OnRetry {
                error: 1,
                attempt: 1,
                delay: Duration::ZERO
            },
            Event::Slept(Duration::ZERO),
            Event::Call(2),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_panic_in_an_async_body_propagates_and_is_not_retried() {
    #[retry(constant("1s"), attempts = 5)]
    async fn panics() -> Result<(), u32> {
        let n = next_call();
        if n == 2 {
            panic!("async boom");
        }
        Err(n)
    }
    fresh();
    // The current-thread runtime runs the task on this thread, so the
    // thread-local call count is this test's.
    let joined = tokio::spawn(panics()).await;
    assert!(joined.unwrap_err().is_panic());
    assert_eq!(calls(), 2);
}
