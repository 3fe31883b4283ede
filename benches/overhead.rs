//! The cost of `#[retry]` on the success path: the same small function
//! without the attribute, with `#[retry]` (every default), and with
//! `#[retry(..., jitter = "equal", when = is_transient)]`, sync and async.
//!
//! All three versions have the same body: decode a 32-byte frame (an FNV-1a
//! checksum over `black_box`ed bytes, checked against its trailer) and return
//! `Ok(payload)`; the error branch exists but is never taken. On success the
//! attribute reads no clock, draws no random number and allocates nothing;
//! what remains is setting up the loop (and, for an `async fn`, a larger
//! future: the summary prints the sizes).
//!
//! Each version exists twice:
//!
//! - **as written** (groups `overhead_sync`, `overhead_async`): no inline
//!   attribute, the way users write their functions; the compiler inlines
//!   where it likes, with and without `#[retry]` alike. The target applies
//!   here.
//! - **out of line** (`overhead_sync_call`, `overhead_async_call`): each
//!   version `#[inline(never)]`, so every call is a real call. For an
//!   `async fn` this also measures a cost of rustc's, not of the loop: the
//!   caller copies the returned future (twice, with `memcpy`) into the
//!   awaiting future, so the cost grows with the future's size (16 B
//!   without the attribute, about 380 B with it: the retry state and tokio's
//!   `Sleep` live in it). A future that is `tokio::spawn`ed or boxed is
//!   copied the same way.
//!
//! Each async call is awaited on a current-thread tokio runtime through
//! criterion's `to_async`.
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
//! cargo bench --bench overhead -- --warm-up-time 1 --measurement-time 3
//! ```

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use backoff_runtime::retry;
use criterion::Criterion;

/// A frame: 28 bytes of payload, then their FNV-1a checksum (low 32 bits,
/// little endian).
const FRAME: [u8; 32] = frame();

const fn frame() -> [u8; 32] {
    let mut f = [0u8; 32];
    let mut i = 0;
    while i < 28 {
        f[i] = (i as u8).wrapping_mul(37).wrapping_add(11);
        i += 1;
    }
    let sum = fnv(&f, 28).to_le_bytes();
    f[28] = sum[0];
    f[29] = sum[1];
    f[30] = sum[2];
    f[31] = sum[3];
    f
}

const fn fnv(bytes: &[u8], len: usize) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut i = 0;
    while i < len {
        h ^= bytes[i] as u32;
        h = h.wrapping_mul(0x0100_0193);
        i += 1;
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
    ($frame:expr) => {{
        let frame: &[u8; 32] = black_box($frame);
        let sum = u32::from_le_bytes([frame[28], frame[29], frame[30], frame[31]]);
        if fnv(frame, 28) == sum {
            Ok(u64::from_le_bytes([
                frame[0], frame[1], frame[2], frame[3], frame[4], frame[5], frame[6], frame[7],
            ]))
        } else {
            Err(DecodeError { transient: true })
        }
    }};
}

/// The three versions of the decoder, sync and async, in a module; `$inline`
/// is the inline attribute they all get.
macro_rules! versions {
    ($module:ident, $(#[$inline:meta])*) => {
        mod $module {
            use super::*;

            $(#[$inline])*
            pub(crate) fn decode_plain(frame: &[u8; 32]) -> Result<u64, DecodeError> {
                decode_body!(frame)
            }

            $(#[$inline])*
            #[retry]
            pub(crate) fn decode_retry(frame: &[u8; 32]) -> Result<u64, DecodeError> {
                decode_body!(frame)
            }

            $(#[$inline])*
            #[retry(exponential(base = "10ms", max = "1s"), attempts = 5, jitter = "equal", when = is_transient)]
            pub(crate) fn decode_retry_when(frame: &[u8; 32]) -> Result<u64, DecodeError> {
                decode_body!(frame)
            }

            $(#[$inline])*
            pub(crate) async fn decode_plain_async(frame: &[u8; 32]) -> Result<u64, DecodeError> {
                decode_body!(frame)
            }

            $(#[$inline])*
            #[retry]
            pub(crate) async fn decode_retry_async(frame: &[u8; 32]) -> Result<u64, DecodeError> {
                decode_body!(frame)
            }

            $(#[$inline])*
            #[retry(exponential(base = "10ms", max = "1s"), attempts = 5, jitter = "equal", when = is_transient)]
            pub(crate) async fn decode_retry_when_async(frame: &[u8; 32]) -> Result<u64, DecodeError> {
                decode_body!(frame)
            }
        }
    };
}

versions!(written,);
versions!(call, #[inline(never)]);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
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
            b.iter(|| $m::decode_plain(black_box(&FRAME)))
        });
        g.bench_function(VERSIONS[1], |b| {
            b.iter(|| $m::decode_retry(black_box(&FRAME)))
        });
        g.bench_function(VERSIONS[2], |b| {
            b.iter(|| $m::decode_retry_when(black_box(&FRAME)))
        });
        g.finish();
        let rt = runtime();
        let mut g = c.benchmark_group(concat!("overhead_async", $suffix));
        g.bench_function(VERSIONS[0], |b| {
            b.to_async(&rt)
                .iter(|| $m::decode_plain_async(black_box(&FRAME)))
        });
        g.bench_function(VERSIONS[1], |b| {
            b.to_async(&rt)
                .iter(|| $m::decode_retry_async(black_box(&FRAME)))
        });
        g.bench_function(VERSIONS[2], |b| {
            b.to_async(&rt)
                .iter(|| $m::decode_retry_when_async(black_box(&FRAME)))
        });
        g.finish();
    }};
}

/// The interleaved rounds of one module of [`versions!`], sync then async.
macro_rules! own_rounds_of {
    ($m:ident, $suffix:literal) => {{
        own_rounds(
            concat!("sync", $suffix),
            &mut [
                &mut |n| common::time_sync(n, || $m::decode_plain(black_box(&FRAME))),
                &mut |n| common::time_sync(n, || $m::decode_retry(black_box(&FRAME))),
                &mut |n| common::time_sync(n, || $m::decode_retry_when(black_box(&FRAME))),
            ],
        );
        let rt = runtime();
        own_rounds(
            concat!("async", $suffix),
            &mut [
                &mut |n| time_async(&rt, n, || $m::decode_plain_async(black_box(&FRAME))),
                &mut |n| time_async(&rt, n, || $m::decode_retry_async(black_box(&FRAME))),
                &mut |n| time_async(&rt, n, || $m::decode_retry_when_async(black_box(&FRAME))),
            ],
        );
    }};
}

/// Times `f().await` `iters` times inside one `block_on`, as criterion's
/// async `iter` does.
fn time_async<F: Future>(
    rt: &tokio::runtime::Runtime,
    iters: u64,
    mut f: impl FnMut() -> F,
) -> Duration {
    rt.block_on(async {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(f().await);
        }
        start.elapsed()
    })
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
        "\n== #[retry] success-path overhead: ratio with/without attribute (target <= 1.02, as written) =="
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
        size_of_val(&written::decode_plain_async(&FRAME)),
        size_of_val(&written::decode_retry_async(&FRAME)),
        size_of_val(&written::decode_retry_when_async(&FRAME)),
    );

    println!("own interleaved rounds ({ROUNDS} rounds x ~{ROUND:?} per version):");
    own_rounds_of!(written, "");
    own_rounds_of!(call, "_call");
}

fn main() {
    // Sanity: the frame decodes, with and without the attribute.
    assert_eq!(
        call::decode_plain(&FRAME).ok(),
        call::decode_retry_when(&FRAME).ok(),
        "the frame must decode"
    );
    assert!(written::decode_retry(&FRAME).is_ok());

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
