//! `Policy::parse` against the attribute: for every schedule text the ui
//! pass cases and `tests/schedules.rs` write (and a few more forms), the
//! same function under `#[retry(TEXT)]` and under `Policy::parse(TEXT)`
//! sleeps the same, on tokio's paused clock.
//!
//! A schedule without randomness gives the same gaps, to the nanosecond.
//! The attribute draws its jitter from the process's sequence and cannot be
//! seeded, so a random one is compared draw for draw with the schedule
//! forced to no jitter (`, jitter = "none"` added to both: the strategy,
//! the attempt count and the stop rules), and by its spread (over 300 calls
//! each, every retry's shortest and longest sleep agree within 6 % of the
//! range); `Policy::parse` with a seed gives the same delays every time.

use std::time::Duration;

use backoff_runtime::{DynPolicy, Policy, Strategy, retry};
use backoff_workspace_tests::AttemptLog;

/// Calls until the body has failed this often (then it succeeds): bounds
/// the unlimited schedules.
const FAILURES: usize = 40;

/// How many calls a random schedule's spread is read from.
const CALLS: usize = 300;

fn body(log: &AttemptLog) -> Result<(), &'static str> {
    let failed = log.attempt();
    if log.count() > FAILURES {
        Ok(())
    } else {
        failed
    }
}

/// The gaps of one call of the policy's loop.
async fn runtime_gaps(policy: &DynPolicy) -> Vec<Duration> {
    let log = AttemptLog::default();
    let _ = policy.retry_async(async || body(&log)).await;
    log.gaps()
}

/// Each retry's shortest and longest gap over many calls, and the fewest
/// and most gaps.
fn spread(calls: &[Vec<Duration>]) -> (Vec<(Duration, Duration)>, usize, usize) {
    let most = calls.iter().map(Vec::len).max().unwrap_or(0);
    let fewest = calls.iter().map(Vec::len).min().unwrap_or(0);
    let bounds = (0..most)
        .map(|k| {
            let at_k = calls.iter().filter_map(|c| c.get(k));
            let lo = at_k.clone().min().copied().unwrap_or_default();
            let hi = at_k.max().copied().unwrap_or_default();
            (lo, hi)
        })
        .collect();
    (bounds, fewest, most)
}

/// Asserts two spreads agree. Each retry's shortest and longest sleep
/// within 6 % of the range (a uniform draw, 300 times, comes that close
/// to its bounds but once in 10⁸); for a strategy that reads its previous
/// delay (`decorrelated`), whose later draws are not uniform, each
/// retry's mean within 15 % of the range instead. The fewest and most
/// attempts agree; when a deadline makes them vary, their mean within 10 %.
fn same_spread(
    text: &str,
    reads_previous: bool,
    attribute: &[Vec<Duration>],
    parsed: &[Vec<Duration>],
) {
    let (a, a_fewest, a_most) = spread(attribute);
    let (p, p_fewest, p_most) = spread(parsed);
    if a_fewest == a_most {
        assert_eq!((a_fewest, a_most), (p_fewest, p_most), "{text}: attempts");
    } else {
        let count = |calls: &[Vec<Duration>]| {
            calls.iter().map(Vec::len).sum::<usize>() as f64 / calls.len() as f64
        };
        let (a, p) = (count(attribute), count(parsed));
        assert!(
            (a - p).abs() <= a * 0.1 + 0.5,
            "{text}: {a} attempts on average, parsed {p}"
        );
    }
    // (Retries that few calls reach are left out.)
    let reached = |k: usize| {
        attribute.iter().filter(|c| c.len() > k).count() >= CALLS / 2
            && parsed.iter().filter(|c| c.len() > k).count() >= CALLS / 2
    };
    let mean = |calls: &[Vec<Duration>], k: usize| {
        let at_k: Vec<f64> = calls
            .iter()
            .filter_map(|c| c.get(k))
            .map(Duration::as_secs_f64)
            .collect();
        at_k.iter().sum::<f64>() / at_k.len() as f64
    };
    for (k, ((alo, ahi), (plo, phi))) in a.iter().zip(&p).enumerate().filter(|(k, _)| reached(*k)) {
        let width = (*ahi).max(*phi) - (*alo).min(*plo);
        let close = if reads_previous && k > 0 {
            (mean(attribute, k) - mean(parsed, k)).abs() <= width.as_secs_f64() * 0.15 + 0.001
        } else {
            let tolerance = width.mul_f64(0.06) + Duration::from_millis(1);
            alo.abs_diff(*plo) <= tolerance && ahi.abs_diff(*phi) <= tolerance
        };
        assert!(
            close,
            "{text}: retry {}: attribute {alo:?}..{ahi:?}, parsed {plo:?}..{phi:?}",
            k + 1
        );
    }
}

/// Whether every call slept the same.
fn exact(calls: &[Vec<Duration>]) -> bool {
    calls.windows(2).all(|w| w[0] == w[1])
}

/// The attribute's calls against as many of the parsed policy's: the same
/// gaps when the attribute's never vary, else the same spread (and a
/// seeded parsed policy repeats its draws).
async fn compare(text: &str, policy: &DynPolicy, attribute_calls: &[Vec<Duration>]) {
    let mut parsed_calls = Vec::new();
    for _ in 0..CALLS {
        parsed_calls.push(runtime_gaps(policy).await);
    }
    if exact(attribute_calls) {
        assert!(
            exact(&parsed_calls),
            "{text}: the parsed policy's delays vary"
        );
        assert_eq!(attribute_calls[0], parsed_calls[0], "{text}");
    } else {
        let reads_previous = policy.strategy().reads_previous();
        same_spread(text, reads_previous, attribute_calls, &parsed_calls);
        let seeded = policy.clone().seed(7);
        assert_eq!(
            runtime_gaps(&seeded).await,
            runtime_gaps(&seeded).await,
            "{text}"
        );
    }
}

macro_rules! same_as_the_attribute {
    ($($name:ident: [$($text:tt)*],)*) => {$(
        #[tokio::test(start_paused = true)]
        async fn $name() {
            #[retry($($text)*)]
            async fn attribute(log: &AttemptLog) -> Result<(), &'static str> {
                body(log)
            }
            #[retry($($text)*, jitter = "none")]
            async fn still(log: &AttemptLog) -> Result<(), &'static str> {
                body(log)
            }
            macro_rules! gaps {
                ($f:ident) => {{
                    let log = AttemptLog::default();
                    let _ = $f(&log).await;
                    log.gaps()
                }};
            }
            let text = stringify!($($text)*);
            let policy = Policy::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let still_text = format!("{text}, jitter = \"none\"");
            let still_policy = Policy::parse(&still_text).unwrap_or_else(|e| panic!("{still_text}: {e}"));
            // (A random strategy without jitter still varies: compared by
            // its spread below.)
            let mut attribute_still = Vec::new();
            let mut parsed_still = Vec::new();
            for _ in 0..3 {
                attribute_still.push(gaps!(still));
                parsed_still.push(runtime_gaps(&still_policy).await);
            }
            if exact(&attribute_still) {
                assert_eq!(attribute_still, parsed_still, "{still_text}");
            }
            let mut attribute_calls = Vec::new();
            for _ in 0..CALLS {
                attribute_calls.push(gaps!(attribute));
            }
            compare(text, &policy, &attribute_calls).await;
        }
    )*};
}

same_as_the_attribute! {
    // ui-tests/tests/pass
    every_form_exponential: [exponential(base = "100ms", max = "5s"), attempts = 5],
    every_form_exponential_full: [exponential(base = "250ms", factor = 1.5, max = "1m30s")],
    every_form_default_exponential: [exponential],
    every_form_linear: [linear(base = "1.5s", max = "2m"), attempts = unlimited, max_elapsed = "10m"],
    every_form_constant_equal: [constant("1s"), attempts = 6],
    every_form_constant_delay: [constant(delay = "500ms")],
    every_form_constant_default: [constant, attempts = 8],
    every_form_fibonacci: [fibonacci(base = "10ms", max = "1s"), attempts = 12],
    every_form_decorrelated: [decorrelated(base = "5ms", max = "2s"), attempts = 10],
    every_form_decorrelated_default: [decorrelated],
    every_form_immediate: [immediate, attempts = 4294967295],
    every_form_attempts: [attempts = 2],
    immediate: [immediate],
    immediate_three: [immediate, attempts = 3],
    retry_after_max: [attempts = 5, retry_after_max = "1m"],
    raw_identifier: [immediate, r#attempts = 2],
    // tests/schedules.rs
    the_essays_sum: [sum(constant("3m"), exponential(base = "1m", max = "1h")), attempts = 6],
    a_chain: [chain(exponential(base = "100ms", times = 3), linear(base = "1s", max = "2500ms", times = 2), constant("1m")), attempts = 9],
    steps: [steps("1s", "5s", "30s"), attempts = 6],
    shorter: [shorter(exponential(base = "1s", max = "1m"), linear(base = "3s", max = "1m")), attempts = 6],
    longer: [longer(exponential(base = "1s", max = "1m"), linear(base = "3s", max = "1m")), attempts = 6],
    nested_forms: [chain(sum(immediate, exponential(base = "2s"), times = 5), steps("1s", "2s")), attempts = 9],
    decorrelated_in_a_chain: [chain(constant("5s", times = 2), decorrelated(base = "100ms", max = "1m")), attempts = 12],
    the_clojure_stop: [exponential(base = "1s", max = "1m"), stop_at_delay = "10s"],
    a_stop_on_steps: [steps("1s", "5s", "30s"), stop_at_delay = "30s"],
    a_stop_on_a_random_schedule: [decorrelated(base = "100ms", max = "1m"), stop_at_delay = "2s"],
    sidekiq: [sidekiq(unit = "1ms"), attempts = 6],
    buckets: [buckets(unit = "1ms", max = "1s"), attempts = 6],
}

// Schedules whose stages end (tests/stages.rs) and the Effect pattern's
// deadline, without jitter: where a timed stage ends (or how many attempts
// fit before a deadline) depends on the sleeps before it, so with jitter the
// delays of one retry are a mixture that a spread of 300 calls does not
// pin; without it, the parsed policy must give the attribute's gaps exactly.
macro_rules! same_gaps_as_the_attribute {
    ($($name:ident: [$($text:tt)*] => $secs:expr,)*) => {$(
        #[tokio::test(start_paused = true)]
        async fn $name() {
            #[retry($($text)*)]
            async fn attribute(log: &AttemptLog) -> Result<(), &'static str> {
                body(log)
            }
            let text = stringify!($($text)*);
            let policy = Policy::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let log = AttemptLog::default();
            let _ = attribute(&log).await;
            let secs: &[u64] = &$secs;
            let expected: Vec<Duration> = secs.iter().map(|s| Duration::from_secs(*s)).collect();
            assert_eq!(log.gaps(), expected, "{text}: the attribute");
            assert_eq!(runtime_gaps(&policy).await, expected, "{text}: parsed");
        }
    )*};
}

same_gaps_as_the_attribute! {
    a_stage_for_a_time: [chain(constant("1s", for = "3s"), constant("1m")), jitter = "none", attempts = 6] => [1, 1, 1, 60, 60],
    a_union_of_a_side_that_ends: [shorter(constant("1s", times = 3), constant("5s")), jitter = "none", attempts = 7] => [1, 1, 1, 5, 5, 5],
    an_intersection_that_ends: [longer(constant("1s", times = 3), constant("2s")), jitter = "none", attempts = 9] => [2, 2, 2],
    a_timed_side: [longer(constant("2s", for = "5s"), constant("1s")), jitter = "none", attempts = 9] => [2, 2, 2],
    // (With jitter, how many attempts fit in the deadline varies too much for
    // a spread of 300 calls: it failed about 1 run in 20.)
    the_effect_deadline: [constant("4s"), jitter = "none", attempts = unlimited, max_elapsed = "10s", on_deadline = "last_try"] => [4, 4, 2],
}

// Jitters given in the text (the forced-off run above cannot add a
// second `jitter`).
macro_rules! same_jitter_as_the_attribute {
    ($($name:ident: [$($text:tt)*],)*) => {$(
        #[tokio::test(start_paused = true)]
        async fn $name() {
            #[retry($($text)*)]
            async fn attribute(log: &AttemptLog) -> Result<(), &'static str> {
                body(log)
            }
            let text = stringify!($($text)*);
            let policy = Policy::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let mut attribute_calls = Vec::new();
            for _ in 0..CALLS {
                let log = AttemptLog::default();
                let _ = attribute(&log).await;
                attribute_calls.push(log.gaps());
            }
            compare(text, &policy, &attribute_calls).await;
        }
    )*};
}

same_jitter_as_the_attribute! {
    full: [exponential(base = "100ms", max = "5s"), attempts = 5, jitter = "full"],
    equal: [constant("1s"), jitter = "equal"],
    half: [constant(delay = "500ms"), jitter = "half"],
    scattered: [constant, jitter = scattered(0.25), attempts = 6],
    none: [fibonacci(base = "10ms", max = "1s"), jitter = "none"],
    decorrelated_alone: [decorrelated, jitter = "none"],
    only_jitter: [jitter = "none"],
    hooks: [attempts = 3, jitter = "none"],
    a_range_on_a_chain: [chain(constant("10s", times = 3), constant("20s")), attempts = 40, jitter = range(0.5, 1.5)],
    spread_on_a_chain: [chain(constant("1s", times = 2), exponential(base = "2s", max = "20s")), jitter = "spread", attempts = 8],
    the_stop_without_jitter: [exponential(base = "1s", max = "1m"), stop_at_delay = "10s", jitter = "none"],
    the_deadline_without_jitter: [constant("4s"), jitter = "none", attempts = unlimited, max_elapsed = "10s", on_deadline = "last_try"],
}

#[test]
fn a_bad_text_is_the_attributes_message_with_its_span() {
    let text = r#"exponential(base = "1s", max = "100ms"), attempts = 0"#;
    let error = Policy::parse(text).unwrap_err();
    let all: Vec<_> = error.errors().collect();
    assert_eq!(
        all,
        [
            (19..23, "`base` is above `max`; lower `base` or raise `max`"),
            (
                52..53,
                "`attempts = 0` would never call the function; `attempts` counts calls, the first included, so it must be at least 1"
            ),
        ]
    );
    assert_eq!(&text[error.errors().next().unwrap().0], "\"1s\"");
}

#[test]
fn a_policy_from_configuration_is_read_through_serde() {
    #[derive(serde::Deserialize)]
    struct Config {
        retry: DynPolicy,
    }
    let config: Config =
        serde_json::from_str(r#"{"retry": "constant(\"2s\"), attempts = 3, jitter = \"none\""}"#)
            .unwrap();
    let secs: Vec<u64> = config.retry.delays().map(|d| d.as_secs()).collect();
    assert_eq!(secs, [2, 2]);
    let error = serde_json::from_str::<Config>(r#"{"retry": "constant(\"2s\"), atempts = 3"}"#)
        .err()
        .unwrap();
    assert!(
        error
            .to_string()
            .starts_with("unknown argument `atempts`; did you mean `attempts`?"),
        "{error}"
    );
}

#[test]
fn a_parsed_policy_works_with_delay_for_and_is_send_sync_static() {
    fn shared<T: Send + Sync + 'static>(_: &T) {}
    let policy: DynPolicy = r#"sidekiq, attempts = 26, jitter = "spread""#.parse().unwrap();
    shared(&policy);
    let wait = policy.delay_for(3, 12_345).unwrap();
    assert_eq!(policy.delay_for(3, 12_345), Some(wait));
    assert_eq!(policy.delay_for(26, 12_345), None);
}
