//! The retry loop's own cost per attempt: a whole call that fails every
//! attempt, `#[retry(immediate, attempts = N)]` for N = 1, 10, 100.
//!
//! Each attempt calls the same `#[inline(never)]` operation, which always
//! fails; `immediate` waits zero, so what remains is the loop itself (one
//! `RetryState::next_delay_for` per failed attempt; a zero delay is not
//! slept).
//! Next to it, in the same group, a bare hand-written `for` loop makes the same
//! N calls with no policy at all: the difference is the attribute's cost.
//!
//! Groups (criterion reports time per call; `Throughput::Elements(N)` gives
//! attempts per second):
//!
//! - `failing_sync/{retry,bare_loop}/N` — plain fn with the default sleep,
//!   `sleep::blocking`, which returns at once for a zero delay.
//! - `failing_async/{retry_noop_sleep,bare_loop}/N` — `async fn` on a
//!   current-thread tokio runtime (`to_async`), with `sleep = noop` (an
//!   `async fn` that returns at once): the async loop's own cost.
//! - `failing_async_tokio_sleep/retry/N` — the same `async fn` with the
//!   default sleep, tokio's, which the loop skips for a zero delay (tokio's
//!   timer has a 1 ms resolution: `tokio::time::sleep(Duration::ZERO)` would
//!   park the task until the next tick).
//!
//! The summary at the end prints ns per attempt (time / N), the marginal
//! cost of one more attempt ((t(100) − t(1)) / 99), and the loop's own share
//! ((retry − bare) / N): from criterion's medians, then from the bench's own
//! measurement (every routine timed in 201 interleaved rounds of ~250 µs,
//! fastest round each), which other processes on a busy machine disturb
//! less.
//!
//! ```text
//! cargo bench -p backoff-workspace-tests --bench failing -- --warm-up-time 1 --measurement-time 3
//! ```

mod common;

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use backoff_runtime::retry;
use criterion::{BenchmarkId, Criterion, Throughput};

/// The error every attempt returns.
#[derive(Debug)]
struct Failure(#[allow(dead_code)] u64);

/// The operation: opaque, always fails for a non-zero input.
#[inline(never)]
fn op(input: &u64) -> Result<u64, Failure> {
    let x = black_box(*input);
    if x == 0 { Ok(x) } else { Err(Failure(x)) }
}

#[inline(never)]
async fn op_async(input: &u64) -> Result<u64, Failure> {
    op(input)
}

async fn noop(_: Duration) {}

/// `#[retry(immediate, attempts = N)]`, sync, async, async with `sleep = noop`.
macro_rules! failing {
    ($sync:ident, $async_:ident, $async_noop:ident, $n:literal) => {
        #[inline(never)]
        #[retry(immediate, attempts = $n)]
        fn $sync(input: &u64) -> Result<u64, Failure> {
            op(input)
        }

        #[inline(never)]
        #[retry(immediate, attempts = $n)]
        async fn $async_(input: &u64) -> Result<u64, Failure> {
            op_async(input).await
        }

        #[inline(never)]
        #[retry(immediate, attempts = $n, sleep = noop)]
        async fn $async_noop(input: &u64) -> Result<u64, Failure> {
            op_async(input).await
        }
    };
}

failing!(fail_1, fail_1_async, fail_1_async_noop, 1);
failing!(fail_10, fail_10_async, fail_10_async_noop, 10);
failing!(fail_100, fail_100_async, fail_100_async_noop, 100);

/// The baseline: `n` calls of the same operation, no policy.
#[inline(never)]
fn bare(n: u32, input: &u64) -> Result<u64, Failure> {
    let mut result = op(input);
    for _ in 1..n {
        if result.is_ok() {
            break;
        }
        result = op(input);
    }
    result
}

#[inline(never)]
async fn bare_async(n: u32, input: &u64) -> Result<u64, Failure> {
    let mut result = op_async(input).await;
    for _ in 1..n {
        if result.is_ok() {
            break;
        }
        result = op_async(input).await;
    }
    result
}

const NS: [u32; 3] = [1, 10, 100];

/// Own measurement after criterion's: many short interleaved rounds.
const ROUNDS: usize = 201;
const ROUND: Duration = Duration::from_micros(250);

fn sync_fn(n: u32) -> fn(&u64) -> Result<u64, Failure> {
    match n {
        1 => fail_1,
        10 => fail_10,
        100 => fail_100,
        _ => unreachable!(),
    }
}

fn bench_sync(c: &mut Criterion) {
    let mut g = c.benchmark_group("failing_sync");
    for n in NS {
        g.throughput(Throughput::Elements(u64::from(n)));
        let f = sync_fn(n);
        g.bench_function(BenchmarkId::new("retry", n), |b| {
            b.iter(|| f(black_box(&7)))
        });
        g.bench_function(BenchmarkId::new("bare_loop", n), |b| {
            b.iter(|| bare(black_box(n), black_box(&7)))
        });
    }
    g.finish();
}

fn bench_async(c: &mut Criterion) {
    let rt = common::runtime();
    let mut g = c.benchmark_group("failing_async");
    macro_rules! async_n {
        ($n:literal, $f:ident) => {
            g.throughput(Throughput::Elements($n));
            g.bench_function(BenchmarkId::new("retry_noop_sleep", $n), |b| {
                b.to_async(&rt).iter(|| $f(black_box(&7)))
            });
            g.bench_function(BenchmarkId::new("bare_loop", $n), |b| {
                b.to_async(&rt)
                    .iter(|| bare_async(black_box($n), black_box(&7)))
            });
        };
    }
    async_n!(1, fail_1_async_noop);
    async_n!(10, fail_10_async_noop);
    async_n!(100, fail_100_async_noop);
    g.finish();

    let mut g = c.benchmark_group("failing_async_tokio_sleep");
    macro_rules! tokio_n {
        ($n:literal, $f:ident) => {
            g.throughput(Throughput::Elements($n));
            g.bench_function(BenchmarkId::new("retry", $n), |b| {
                b.to_async(&rt).iter(|| $f(black_box(&7)))
            });
        };
    }
    tokio_n!(1, fail_1_async);
    tokio_n!(10, fail_10_async);
    tokio_n!(100, fail_100_async);
    g.finish();
}

/// One line per variant: ns per attempt for each N, and the marginal cost
/// of one more attempt.
fn report_variant(group: &str, variant: &str, t: &dyn Fn(String) -> Option<f64>) {
    let times: Vec<Option<f64>> = NS
        .iter()
        .map(|n| t(format!("{group}/{variant}/{n}")))
        .collect();
    let per: Vec<String> = NS
        .iter()
        .zip(&times)
        .map(|(n, t)| match t {
            Some(t) => format!("N={n}: {:.2}", t / f64::from(*n)),
            None => format!("N={n}: -"),
        })
        .collect();
    let marginal = match (times[0], times[2]) {
        (Some(a), Some(b)) => format!("{:.2}", (b - a) / 99.0),
        _ => "-".to_owned(),
    };
    println!(
        "  {:<50} ns/attempt  {}  | marginal (t100 - t1) / 99: {marginal}",
        format!("{group}/{variant}"),
        per.join("  ")
    );
}

fn report(since: SystemTime) {
    println!(
        "\n== failing call, #[retry(immediate, attempts = N)]: ns per attempt = criterion median / N =="
    );
    let t = |id: String| common::estimate_ns(&id, "median", since);
    for (group, retry) in [
        ("failing_sync", "retry"),
        ("failing_async", "retry_noop_sleep"),
    ] {
        report_variant(group, retry, &t);
        report_variant(group, "bare_loop", &t);
        let own: Vec<String> = NS
            .iter()
            .map(|n| {
                let r = t(format!("{group}/{retry}/{n}"));
                let b = t(format!("{group}/bare_loop/{n}"));
                match (r, b) {
                    (Some(r), Some(b)) => format!("N={n}: {:.2}", (r - b) / f64::from(*n)),
                    _ => format!("N={n}: -"),
                }
            })
            .collect();
        println!(
            "  {:<50} ns/attempt  {}",
            format!("{group}: loop's own cost (retry - bare) / N"),
            own.join("  ")
        );
    }
    report_variant("failing_async_tokio_sleep", "retry", &t);

    println!(
        "\n== own interleaved rounds: fastest of {ROUNDS} rounds x ~{ROUND:?}, ns per attempt =="
    );
    let rt = common::runtime();
    let sync: Vec<Box<dyn FnMut(u64) -> Duration>> = NS
        .iter()
        .flat_map(|&n| {
            let f = sync_fn(n);
            [
                Box::new(move |it| common::time_sync(it, || f(black_box(&7))))
                    as Box<dyn FnMut(u64) -> Duration>,
                Box::new(move |it| common::time_sync(it, || bare(black_box(n), black_box(&7)))),
            ]
        })
        .collect();
    own_rounds("failing_sync", "retry", sync);
    let rt = &rt;
    let asyncs: Vec<Box<dyn FnMut(u64) -> Duration + '_>> = vec![
        Box::new(|it| common::time_async(rt, it, || fail_1_async_noop(black_box(&7)))),
        Box::new(|it| common::time_async(rt, it, || bare_async(black_box(1), black_box(&7)))),
        Box::new(|it| common::time_async(rt, it, || fail_10_async_noop(black_box(&7)))),
        Box::new(|it| common::time_async(rt, it, || bare_async(black_box(10), black_box(&7)))),
        Box::new(|it| common::time_async(rt, it, || fail_100_async_noop(black_box(&7)))),
        Box::new(|it| common::time_async(rt, it, || bare_async(black_box(100), black_box(&7)))),
    ];
    own_rounds("failing_async", "retry_noop_sleep", asyncs);
}

/// `routines`: for each N, the retry then the bare loop.
fn own_rounds<'a>(
    group: &str,
    retry: &str,
    mut routines: Vec<Box<dyn FnMut(u64) -> Duration + 'a>>,
) {
    let mut refs: Vec<&mut dyn FnMut(u64) -> Duration> = routines
        .iter_mut()
        .map(|r| &mut **r as &mut dyn FnMut(u64) -> Duration)
        .collect();
    let rounds = common::interleaved(ROUNDS, ROUND, &mut refs);
    let min: Vec<f64> = rounds.iter().map(common::Rounds::min).collect();
    for (k, variant) in [retry, "bare_loop"].into_iter().enumerate() {
        let per: Vec<String> = NS
            .iter()
            .enumerate()
            .map(|(i, n)| format!("N={n}: {:.2}", min[2 * i + k] / f64::from(*n)))
            .collect();
        println!(
            "  {:<50} ns/attempt  {}  | marginal (t100 - t1) / 99: {:.2}",
            format!("{group}/{variant}"),
            per.join("  "),
            (min[4 + k] - min[k]) / 99.0
        );
    }
    let own: Vec<String> = NS
        .iter()
        .enumerate()
        .map(|(i, n)| {
            format!(
                "N={n}: {:.2}",
                (min[2 * i] - min[2 * i + 1]) / f64::from(*n)
            )
        })
        .collect();
    println!(
        "  {:<50} ns/attempt  {}",
        format!("{group}: loop's own cost (retry - bare) / N"),
        own.join("  ")
    );
}

fn main() {
    for n in NS {
        assert!(sync_fn(n)(&7).is_err());
        assert!(bare(n, &7).is_err());
    }
    let since = SystemTime::now();
    // Plots are off to keep the run short on a busy machine; pass
    // `--plotting-backend plotters` to get them back.
    let mut c = Criterion::default().without_plots().configure_from_args();
    bench_sync(&mut c);
    bench_async(&mut c);
    c.final_summary();
    if common::benchmarking() {
        report(since);
    }
}
