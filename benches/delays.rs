//! The cost of computing delays, per strategy × jitter, ours next to
//! backon's equivalent builders in the same run.
//!
//! # What is measured
//!
//! One iteration = a **fresh** iterator producing its first [`N`] = 8 delays,
//! construction included, each delay passed through `black_box`; criterion's
//! time divided by 8 is the cost of one delay (the summary at the end prints
//! it). Eight steps cover a real schedule: exponential 100 ms × 2 reaches its
//! 10 s cap at the 8th delay.
//!
//! - **ours**: the step of the `#[retry]` loop, `RetryState::next_delay()`
//!   (= `next_delay_for(Decision::Retry)`), on a state started exactly as the
//!   attribute starts it: `__private::state_from(policy, SYNC_CLOCK, None)`,
//!   untimed (no `max_elapsed`, no `on_retry`), so no clock is read. The
//!   policy is typed as the attribute types it (`Policy<Exponential>`,
//!   `Policy<Constant>`...) and allows 9 attempts (8 retries). Construction
//!   includes the lazy seeding of the jitter generator at the first random
//!   draw.
//! - **enum**: the same with `Policy` (= `Policy<Builtin>`, what
//!   `Policy::exponential(..)` and the other constructors return, as for a
//!   policy chosen at run time): one dispatch on the strategy per step.
//! - **backon**: `BackoffBuilder::build()` (which seeds a `fastrand::Rng`
//!   from the thread-local generator, jitter or not) then `Iterator::next()`,
//!   `with_max_times(8)`: how backon's retry loops get each delay.
//!
//! After criterion's run the bench prints a table of ns per delay from
//! criterion's medians, then its own figures: all routines of a strategy
//! timed in 201 interleaved rounds of ~250 µs, fastest round each, which
//! other processes on a busy machine disturb less.
//!
//! Both configurations are opaque to the optimizer (`black_box(&policy)`,
//! `black_box(builder)`), as for a policy read from configuration.
//!
//! Parameters: exponential base 100 ms, factor 2, max 10 s (backon
//! `with_min_delay(100ms).with_factor(2.0).with_max_delay(10s)`); linear
//! base 100 ms, max 10 s; constant 1 s; fibonacci base 100 ms, max 10 s;
//! decorrelated base 100 ms, max 10 s. `main` checks that the un-jittered
//! schedules of ours and backon agree before timing anything.
//!
//! # Jitter, and what backon lacks
//!
//! Ours: `none`, `full` = uniform(0, v), `equal` = v/2 + uniform(0, v/2).
//! backon has one jitter only, `with_jitter()`: v + v·U[0,1), i.e.
//! uniform(v, 2v) — additive, and not capped by `max`. It is benchmarked as
//! `backon/additive`, the nearest equivalent of `full`/`equal` (one random
//! draw per delay); `backon/none` matches `ours/none`. backon has no linear
//! and no decorrelated strategy: those groups have `ours/*` only.
//! (`decorrelated` with `full`/`equal` is only reachable through the `Policy`
//! API; the attribute rejects jitter there.)
//!
//! Groups: `delay_<strategy>` with `ours/<jitter>`, `ours_builtin/none` and
//! `backon/<jitter>`;
//! plus `delay_api/exponential_full` comparing the three ways our public API
//! hands out delays: the untimed state (as above), `Policy::start()` (timed:
//! reads the clock when started and at every step) and `Policy::delays()`.
//!
//! ```text
//! cargo bench -p backoff-workspace-tests --bench delays -- --warm-up-time 1 --measurement-time 3
//! ```

mod common;

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use backoff_runtime::__private::{SYNC_CLOCK, state_from};
use backoff_runtime::strategy::{Constant, Decorrelated, Exponential, Fibonacci, Linear};
use backoff_runtime::{Jitter, Policy, Strategy};
use backon::{BackoffBuilder, ConstantBuilder, ExponentialBuilder, FibonacciBuilder};
use criterion::{BenchmarkId, Criterion, Throughput};

/// Delays per iteration.
const N: usize = 8;

/// Own measurement after criterion's: many short interleaved rounds.
const ROUNDS: usize = 201;
const ROUND: Duration = Duration::from_micros(250);

const MS: fn(u64) -> Duration = Duration::from_millis;

const JITTERS: [(&str, Jitter); 3] = [
    ("none", Jitter::None),
    ("full", Jitter::Full),
    ("equal", Jitter::Equal),
];

/// Our policy for `strategy` with `jitter`, allowing `N` retries, typed as
/// `#[retry]` types it: `Policy<Exponential>`, `Policy<Constant>`...
#[derive(Clone, Copy)]
enum Ours {
    Exponential(Policy<Exponential>),
    Linear(Policy<Linear>),
    Constant(Policy<Constant>),
    Fibonacci(Policy<Fibonacci>),
    Decorrelated(Policy<Decorrelated>),
}

fn ours(strategy: &str, jitter: Jitter) -> Ours {
    fn with<S>(s: S, jitter: Jitter) -> Policy<S> {
        Policy::from_strategy(s)
            .jitter(jitter)
            .attempts(N as u32 + 1)
    }
    match strategy {
        "exponential" => Ours::Exponential(with(
            Exponential::new(MS(100)).factor(2.0).max_delay(MS(10_000)),
            jitter,
        )),
        "linear" => Ours::Linear(with(Linear::new(MS(100)).max_delay(MS(10_000)), jitter)),
        "constant" => Ours::Constant(with(Constant::new(MS(1_000)), jitter)),
        "fibonacci" => Ours::Fibonacci(with(Fibonacci::new(MS(100)).max_delay(MS(10_000)), jitter)),
        "decorrelated" => Ours::Decorrelated(with(
            Decorrelated::new(MS(100)).max_delay(MS(10_000)),
            jitter,
        )),
        _ => unreachable!("unknown strategy {strategy}"),
    }
}

/// The same policy with the strategy behind the `Builtin` enum (`Policy`'s
/// default type, what `Policy::exponential(..)` and friends build, as for a
/// policy read from configuration): one dispatch per step.
fn ours_builtin(strategy: &str, jitter: Jitter) -> Policy {
    let p = match strategy {
        "exponential" => Policy::exponential(MS(100))
            .factor(2.0)
            .max_delay(MS(10_000)),
        "linear" => Policy::linear(MS(100)).max_delay(MS(10_000)),
        "constant" => Policy::constant(MS(1_000)),
        "fibonacci" => Policy::fibonacci(MS(100)).max_delay(MS(10_000)),
        "decorrelated" => Policy::decorrelated(MS(100)).max_delay(MS(10_000)),
        _ => unreachable!("unknown strategy {strategy}"),
    };
    p.jitter(jitter).attempts(N as u32 + 1)
}

/// Calls `$f` with the typed policy inside an [`Ours`] (one monomorphic
/// instance per strategy).
macro_rules! with_ours {
    ($ours:expr, $p:ident => $f:expr) => {
        match $ours {
            Ours::Exponential($p) => $f,
            Ours::Linear($p) => $f,
            Ours::Constant($p) => $f,
            Ours::Fibonacci($p) => $f,
            Ours::Decorrelated($p) => $f,
        }
    };
}

/// backon's builders, configured like [`ours`]: `(none, additive jitter)`.
#[derive(Clone, Copy)]
enum Backon {
    Exponential(ExponentialBuilder),
    Constant(ConstantBuilder),
    Fibonacci(FibonacciBuilder),
}

fn backon(strategy: &str, jitter: bool) -> Option<Backon> {
    Some(match strategy {
        "exponential" => {
            let b = ExponentialBuilder::new()
                .with_min_delay(MS(100))
                .with_factor(2.0)
                .with_max_delay(MS(10_000))
                .with_max_times(N);
            Backon::Exponential(if jitter { b.with_jitter() } else { b })
        }
        "constant" => {
            let b = ConstantBuilder::new()
                .with_delay(MS(1_000))
                .with_max_times(N);
            Backon::Constant(if jitter { b.with_jitter() } else { b })
        }
        "fibonacci" => {
            let b = FibonacciBuilder::new()
                .with_min_delay(MS(100))
                .with_max_delay(MS(10_000))
                .with_max_times(N);
            Backon::Fibonacci(if jitter { b.with_jitter() } else { b })
        }
        _ => return None,
    })
}

/// One iteration, ours: a fresh untimed state (as `#[retry]` starts it),
/// then `N` steps.
#[inline(always)]
fn run_ours<S: Strategy>(policy: &Policy<S>) {
    let mut state = state_from(black_box(policy), SYNC_CLOCK, None);
    for _ in 0..N {
        black_box(state.next_delay());
    }
}

/// One iteration, backon: a fresh iterator from the builder, then `N` steps.
#[inline(always)]
fn run_backon<B: BackoffBuilder>(builder: B) {
    let mut it = black_box(builder).build();
    for _ in 0..N {
        black_box(it.next());
    }
}

#[inline(always)]
fn run_backon_any(b: Backon) {
    match b {
        Backon::Exponential(b) => run_backon(b),
        Backon::Constant(b) => run_backon(b),
        Backon::Fibonacci(b) => run_backon(b),
    }
}

const STRATEGIES: [&str; 5] = [
    "exponential",
    "linear",
    "constant",
    "fibonacci",
    "decorrelated",
];

fn bench_strategies(c: &mut Criterion) {
    for strategy in STRATEGIES {
        let mut g = c.benchmark_group(format!("delay_{strategy}"));
        g.throughput(Throughput::Elements(N as u64));
        for (name, jitter) in JITTERS {
            with_ours!(ours(strategy, jitter), policy => {
                g.bench_function(BenchmarkId::new("ours", name), |b| {
                    b.iter(|| run_ours(&policy))
                });
            });
        }
        let builtin = ours_builtin(strategy, Jitter::None);
        g.bench_function(BenchmarkId::new("ours_builtin", "none"), |b| {
            b.iter(|| run_ours(&builtin))
        });
        for (name, jitter) in [("none", false), ("additive", true)] {
            // Monomorphic closures per builder type, so that backon is not
            // charged for our `Backon` enum's dispatch.
            match backon(strategy, jitter) {
                Some(Backon::Exponential(bb)) => {
                    g.bench_function(BenchmarkId::new("backon", name), |b| {
                        b.iter(|| run_backon(bb))
                    });
                }
                Some(Backon::Constant(bb)) => {
                    g.bench_function(BenchmarkId::new("backon", name), |b| {
                        b.iter(|| run_backon(bb))
                    });
                }
                Some(Backon::Fibonacci(bb)) => {
                    g.bench_function(BenchmarkId::new("backon", name), |b| {
                        b.iter(|| run_backon(bb))
                    });
                }
                None => {}
            }
        }
        g.finish();
    }
}

fn bench_api(c: &mut Criterion) {
    let policy = ours_builtin("exponential", Jitter::Full);
    let mut g = c.benchmark_group("delay_api");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(
        BenchmarkId::new("exponential_full", "retry_state_untimed"),
        |b| b.iter(|| run_ours(&policy)),
    );
    g.bench_function(
        BenchmarkId::new("exponential_full", "policy_start_timed"),
        |b| {
            b.iter(|| {
                let mut state = black_box(&policy).start();
                for _ in 0..N {
                    black_box(state.next_delay());
                }
            })
        },
    );
    g.bench_function(BenchmarkId::new("exponential_full", "policy_delays"), |b| {
        b.iter(|| {
            for d in black_box(&policy).delays() {
                black_box(d);
            }
        })
    });
    g.finish();
}

/// The un-jittered schedules of ours and backon agree (backon computes in
/// `f32` seconds, hence the tolerance).
fn check_schedules() {
    for strategy in ["exponential", "constant", "fibonacci"] {
        let ours: Vec<Duration> = with_ours!(ours(strategy, Jitter::None), policy => {
            let mut state = state_from(&policy, SYNC_CLOCK, None);
            (0..N).filter_map(|_| state.next_delay()).collect()
        });
        let builtin = ours_builtin(strategy, Jitter::None);
        let mut state = state_from(&builtin, SYNC_CLOCK, None);
        let same: Vec<Duration> = (0..N).filter_map(|_| state.next_delay()).collect();
        assert_eq!(ours, same, "{strategy}: typed and builtin");
        let theirs: Vec<Duration> = match backon(strategy, false) {
            Some(Backon::Exponential(b)) => b.build().collect(),
            Some(Backon::Constant(b)) => b.build().collect(),
            Some(Backon::Fibonacci(b)) => b.build().collect(),
            None => unreachable!(),
        };
        assert_eq!(ours.len(), N, "{strategy}");
        assert_eq!(theirs.len(), N, "{strategy}");
        for (a, b) in ours.iter().zip(&theirs) {
            assert!(
                a.abs_diff(*b) < Duration::from_micros(1),
                "{strategy}: ours {ours:?} backon {theirs:?}"
            );
        }
    }
}

fn report(since: SystemTime) {
    println!("\n== ns per delay (criterion median / {N}), fresh iterator, first {N} delays ==");
    println!(
        "{:<13} {:>8} {:>8} {:>8} {:>8} | {:>8} {:>9} | {:>10} {:>10} {:>10} {:>10}",
        "strategy",
        "ours/no",
        "ours/ful",
        "ours/eq",
        "enum/no",
        "bk/none",
        "bk/addtv",
        "none:o/b",
        "full:o/b",
        "equal:o/b",
        "enum:o/b",
    );
    let per = |id: String| common::estimate_ns(&id, "median", since).map(|t| t / N as f64);
    let fmt = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |x| format!("{x:.2}"));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}", a / b),
        _ => "-".to_owned(),
    };
    for strategy in STRATEGIES {
        let o: Vec<Option<f64>> = JITTERS
            .iter()
            .map(|(j, _)| per(format!("delay_{strategy}/ours/{j}")))
            .collect();
        let en = per(format!("delay_{strategy}/ours_builtin/none"));
        let bn = per(format!("delay_{strategy}/backon/none"));
        let ba = per(format!("delay_{strategy}/backon/additive"));
        println!(
            "{strategy:<13} {:>8} {:>8} {:>8} {:>8} | {:>8} {:>9} | {:>10} {:>10} {:>10} {:>10}",
            fmt(o[0]),
            fmt(o[1]),
            fmt(o[2]),
            fmt(en),
            fmt(bn),
            fmt(ba),
            ratio(o[0], bn),
            ratio(o[1], ba),
            ratio(o[2], ba),
            ratio(en, bn),
        );
    }
    for api in ["retry_state_untimed", "policy_start_timed", "policy_delays"] {
        println!(
            "delay_api/exponential_full/{api:<20} {:>8} ns per delay",
            fmt(per(format!("delay_api/exponential_full/{api}")))
        );
    }

    println!(
        "\n== own interleaved rounds: ns per delay, fastest of {ROUNDS} rounds x ~{ROUND:?} (less disturbed by other processes) =="
    );
    for strategy in STRATEGIES {
        let mut routines: Vec<Box<dyn FnMut(u64) -> Duration>> = JITTERS
            .iter()
            .map(|(_, j)| {
                with_ours!(ours(strategy, *j), p => {
                    Box::new(move |n| common::time_sync(n, || run_ours(&p)))
                        as Box<dyn FnMut(u64) -> Duration>
                })
            })
            .collect();
        let mut names: Vec<String> = JITTERS.iter().map(|(j, _)| format!("ours/{j}")).collect();
        let builtin = ours_builtin(strategy, Jitter::None);
        routines.push(Box::new(move |n| {
            common::time_sync(n, || run_ours(&builtin))
        }));
        names.push("enum/none".to_owned());
        for (name, jitter) in [("none", false), ("additive", true)] {
            if let Some(b) = backon(strategy, jitter) {
                routines.push(Box::new(move |n| {
                    common::time_sync(n, || run_backon_any(b))
                }));
                names.push(format!("backon/{name}"));
            }
        }
        let mut refs: Vec<&mut dyn FnMut(u64) -> Duration> = routines
            .iter_mut()
            .map(|r| &mut **r as &mut dyn FnMut(u64) -> Duration)
            .collect();
        let rounds = common::interleaved(ROUNDS, ROUND, &mut refs);
        let line: Vec<String> = names
            .iter()
            .zip(&rounds)
            .map(|(n, r)| format!("{n} {:.2}", r.min() / N as f64))
            .collect();
        println!("{strategy:<13} {}", line.join("  "));
    }
}

fn main() {
    check_schedules();
    let since = SystemTime::now();
    // Plots are off to keep the run short on a busy machine; pass
    // `--plotting-backend plotters` to get them back.
    let mut c = Criterion::default().without_plots().configure_from_args();
    bench_strategies(&mut c);
    bench_api(&mut c);
    c.final_summary();
    if common::benchmarking() {
        report(since);
    }
}
