//! The cost of `#[retry]` on the success path: the same small function
//! without the attribute, with `#[retry]` (every default), and with
//! `#[retry(..., jitter = "equal", when = is_transient)]`, sync and async.
//!
//! All three versions have the same body: check a 32-byte frame (an FNV-1a
//! checksum over its `black_box`ed bytes, seeded with the previous call's
//! result) and return `Ok(checksum)`; the error branch exists but is never
//! taken. On success the attribute reads no clock, draws no random number
//! and allocates nothing; what remains is setting up the loop (and, for an
//! `async fn`, a larger future: the summary prints the sizes).
//!
//! # How a call is timed
//!
//! Each call's input is the previous call's result, so calls run one after
//! another, as calls whose results are used do, and each timing is the
//! latency of a call. (Independent back-to-back calls of a 20 ns body let
//! the processor overlap consecutive calls, by an amount that depends on
//! how the compiler happened to lay out each caller; on this body that made
//! ratios swing from 0.9 to 1.5 between builds, for either version.)
//!
//! Each version exists twice:
//!
//! - **as written** (groups `overhead_sync`, `overhead_async`): no inline
//!   attribute, the way users write their functions; the compiler inlines
//!   where it likes, with and without `#[retry]` alike.
//! - **out of line** (`overhead_sync_call`, `overhead_async_call`): each
//!   version `#[inline(never)]`, so every call is a real call (and an
//!   `async fn`'s caller copies the returned future, whose size therefore
//!   counts: the summary prints both sizes; the retry state and tokio's
//!   `Sleep` live in it).
//!
//! Async calls are awaited in a loop inside one `block_on` of a
//! current-thread tokio runtime.
//!
//! After criterion's run, the bench prints the ratios with/without
//! attribute twice: from criterion's median estimates
//! (`target/criterion/<group>/<function>/new/estimates.json`), and from its
//! own interleaved rounds (the three versions timed in rotating order, 401
//! rounds of ~250 µs each; fastest round per version, and the median of
//! per-round ratios), which other processes on a busy machine disturb less.
//! Target: ratio ≤ 1.02.
//!
//! ```text
//! cargo bench -p backoff-workspace-tests --bench overhead -- --warm-up-time 1 --measurement-time 3
//! ```

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use backoff_runtime::retry;
use criterion::Criterion;

/// The frame every call checks.
const FRAME: [u8; 32] = {
    let mut f = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        f[i] = (i as u8).wrapping_mul(37).wrapping_add(11);
        i += 1;
    }
    f
};

/// FNV-1a over `bytes`, starting from `seed` mixed into the offset basis.
fn fnv(bytes: &[u8; 32], seed: u64) -> u32 {
    let mut h: u32 = 0x811c_9dc5 ^ (seed as u32);
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Why a frame was rejected.
#[derive(Debug)]
struct DecodeError {
    transient: bool,
}

fn is_transient(e: &DecodeError) -> bool {
    e.transient
}

macro_rules! decode_body {
    ($frame:expr, $seed:expr) => {{
        let frame: &[u8; 32] = black_box($frame);
        let sum = fnv(frame, $seed);
        // Never true of `FRAME` (its last byte is not 0xFF), but the
        // optimizer cannot know: the error path stays in the function.
        if frame[31] == 0xFF && sum & 1 == 0 {
            Err(DecodeError { transient: true })
        } else {
            Ok(u64::from(sum))
        }
    }};
}

/// The three versions of the check, sync and async, in a module; `$inline`
/// is the inline attribute they all get.
macro_rules! versions {
    ($module:ident, $(#[$inline:meta])*) => {
        mod $module {
            use super::*;

            $(#[$inline])*
            pub(crate) fn decode_plain(frame: &[u8; 32], seed: u64) -> Result<u64, DecodeError> {
                decode_body!(frame, seed)
            }

            $(#[$inline])*
            #[retry]
            pub(crate) fn decode_retry(frame: &[u8; 32], seed: u64) -> Result<u64, DecodeError> {
                decode_body!(frame, seed)
            }

            $(#[$inline])*
            #[retry(exponential(base = "10ms", max = "1s"), attempts = 5, jitter = "equal", when = is_transient)]
            pub(crate) fn decode_retry_when(frame: &[u8; 32], seed: u64) -> Result<u64, DecodeError> {
                decode_body!(frame, seed)
            }

            $(#[$inline])*
            pub(crate) async fn decode_plain_async(frame: &[u8; 32], seed: u64) -> Result<u64, DecodeError> {
                decode_body!(frame, seed)
            }

            $(#[$inline])*
            #[retry]
            pub(crate) async fn decode_retry_async(frame: &[u8; 32], seed: u64) -> Result<u64, DecodeError> {
                decode_body!(frame, seed)
            }

            $(#[$inline])*
            #[retry(exponential(base = "10ms", max = "1s"), attempts = 5, jitter = "equal", when = is_transient)]
            pub(crate) async fn decode_retry_when_async(frame: &[u8; 32], seed: u64) -> Result<u64, DecodeError> {
                decode_body!(frame, seed)
            }
        }
    };
}

versions!(written,);
versions!(call, #[inline(never)]);

/// `iters` calls of `f`, each fed the previous one's result.
fn chain_sync(iters: u64, f: impl Fn(&[u8; 32], u64) -> Result<u64, DecodeError>) -> Duration {
    let mut acc = 0u64;
    let start = Instant::now();
    for _ in 0..iters {
        acc = f(&FRAME, acc).unwrap_or_default();
    }
    let elapsed = start.elapsed();
    black_box(acc);
    elapsed
}

/// [`chain_sync`] for an `async fn`, inside one `block_on`.
fn chain_async<F: Future<Output = Result<u64, DecodeError>>>(
    rt: &tokio::runtime::Runtime,
    iters: u64,
    f: impl Fn(&'static [u8; 32], u64) -> F,
) -> Duration {
    rt.block_on(async {
        let mut acc = 0u64;
        let start = Instant::now();
        for _ in 0..iters {
            acc = f(&FRAME, acc).await.unwrap_or_default();
        }
        let elapsed = start.elapsed();
        black_box(acc);
        elapsed
    })
}

/// `iters` independent calls of `f` (each result only `black_box`ed): the
/// processor may overlap consecutive calls, so this measures throughput.
fn unchained_sync(iters: u64, f: impl Fn(&[u8; 32], u64) -> Result<u64, DecodeError>) -> Duration {
    common::time_sync(iters, || f(&FRAME, 0))
}

/// [`unchained_sync`] for an `async fn`.
fn unchained_async<F: Future<Output = Result<u64, DecodeError>>>(
    rt: &tokio::runtime::Runtime,
    iters: u64,
    f: impl Fn(&'static [u8; 32], u64) -> F,
) -> Duration {
    common::time_async(rt, iters, || f(&FRAME, 0))
}

/// Own measurement: many short rounds, so that most pairs of neighbouring
/// rounds see the same competition from other processes.
const ROUNDS: usize = 401;
const ROUND: Duration = Duration::from_micros(250);

const VERSIONS: [&str; 3] = ["plain", "retry_default", "retry_when_jitter"];

/// The criterion groups of one module of [`versions!`]: `overhead_sync$suffix`
/// and `overhead_async$suffix`.
macro_rules! bench_groups {
    ($c:expr, $m:ident, $suffix:literal) => {{
        let c: &mut Criterion = $c;
        let mut g = c.benchmark_group(concat!("overhead_sync", $suffix));
        g.bench_function(VERSIONS[0], |b| {
            b.iter_custom(|n| chain_sync(n, $m::decode_plain))
        });
        g.bench_function(VERSIONS[1], |b| {
            b.iter_custom(|n| chain_sync(n, $m::decode_retry))
        });
        g.bench_function(VERSIONS[2], |b| {
            b.iter_custom(|n| chain_sync(n, $m::decode_retry_when))
        });
        g.finish();
        let rt = common::runtime();
        let mut g = c.benchmark_group(concat!("overhead_async", $suffix));
        g.bench_function(VERSIONS[0], |b| {
            b.iter_custom(|n| chain_async(&rt, n, $m::decode_plain_async))
        });
        g.bench_function(VERSIONS[1], |b| {
            b.iter_custom(|n| chain_async(&rt, n, $m::decode_retry_async))
        });
        g.bench_function(VERSIONS[2], |b| {
            b.iter_custom(|n| chain_async(&rt, n, $m::decode_retry_when_async))
        });
        g.finish();
    }};
}

/// The interleaved rounds of one module of [`versions!`], sync then async,
/// timed by `$sync`/`$async` (chained or not).
macro_rules! own_rounds_of {
    ($m:ident, $suffix:literal, $sync:ident, $async:ident) => {{
        own_rounds(
            concat!("sync", $suffix),
            &mut [
                &mut |n| $sync(n, $m::decode_plain),
                &mut |n| $sync(n, $m::decode_retry),
                &mut |n| $sync(n, $m::decode_retry_when),
            ],
        );
        let rt = common::runtime();
        own_rounds(
            concat!("async", $suffix),
            &mut [
                &mut |n| $async(&rt, n, $m::decode_plain_async),
                &mut |n| $async(&rt, n, $m::decode_retry_async),
                &mut |n| $async(&rt, n, $m::decode_retry_when_async),
            ],
        );
    }};
}

fn own_rounds(name: &str, routines: &mut [&mut dyn FnMut(u64) -> Duration]) {
    let rounds = common::interleaved(ROUNDS, ROUND, routines);
    let base = &rounds[0];
    println!(
        "  {name:<11} {:<18} min {:>7.2} ns  median {:>7.2} ns",
        VERSIONS[0],
        base.min(),
        base.median()
    );
    for (version, r) in VERSIONS.iter().zip(&rounds).skip(1) {
        println!(
            "  {name:<11} {version:<18} min {:>7.2} ns  median {:>7.2} ns  ratio: min/min {:.3}, median of per-round ratios {:.3}",
            r.min(),
            r.median(),
            r.min() / base.min(),
            r.median_ratio_to(base),
        );
    }
}

fn report(since: SystemTime) {
    println!(
        "\n== #[retry] success-path overhead: ratio with/without attribute (target <= 1.02) =="
    );
    println!("criterion median estimates:");
    for group in [
        "overhead_sync",
        "overhead_async",
        "overhead_sync_call",
        "overhead_async_call",
    ] {
        let est = |v: &str| common::estimate_ns(&format!("{group}/{v}"), "median", since);
        let Some(plain) = est(VERSIONS[0]) else {
            println!(
                "  {group}: no fresh estimate for {} (filtered out?)",
                VERSIONS[0]
            );
            continue;
        };
        for version in &VERSIONS[1..] {
            match est(version) {
                Some(ns) => println!(
                    "  {group:<19} {version:<18} {ns:>7.2} ns vs plain {plain:>7.2} ns  ratio {:.3}",
                    ns / plain
                ),
                None => println!("  {group:<19} {version:<18} no fresh estimate"),
            }
        }
    }

    println!(
        "async future sizes: plain {} B, #[retry] {} B, #[retry(.., when, jitter)] {} B",
        size_of_val(&written::decode_plain_async(&FRAME, 0)),
        size_of_val(&written::decode_retry_async(&FRAME, 0)),
        size_of_val(&written::decode_retry_when_async(&FRAME, 0)),
    );

    println!("own interleaved rounds ({ROUNDS} rounds x ~{ROUND:?} per version):");
    own_rounds_of!(written, "", chain_sync, chain_async);
    own_rounds_of!(call, "_call", chain_sync, chain_async);
    println!(
        "for comparison, independent calls (throughput; consecutive calls overlap by an amount that depends on code layout):"
    );
    own_rounds_of!(written, "", unchained_sync, unchained_async);
    own_rounds_of!(call, "_call", unchained_sync, unchained_async);
}

fn main() {
    // Sanity: every version computes the same, and succeeds.
    let expected = u64::from(fnv(&FRAME, 7));
    assert_eq!(written::decode_plain(&FRAME, 7).ok(), Some(expected));
    assert_eq!(call::decode_retry(&FRAME, 7).ok(), Some(expected));
    assert_eq!(call::decode_retry_when(&FRAME, 7).ok(), Some(expected));
    let rt = common::runtime();
    assert_eq!(
        rt.block_on(written::decode_retry_when_async(&FRAME, 7))
            .ok(),
        Some(expected)
    );

    let since = SystemTime::now();
    // Plots are off to keep the run short on a busy machine; pass
    // `--plotting-backend plotters` to get them back.
    let mut c = Criterion::default().without_plots().configure_from_args();
    bench_groups!(&mut c, written, "");
    bench_groups!(&mut c, call, "_call");
    c.final_summary();
    if common::benchmarking() {
        report(since);
    }
}
