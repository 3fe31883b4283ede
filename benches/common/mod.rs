//! Helpers shared by the benchmarks: where criterion writes its estimates,
//! reading one back, and an interleaved A/B timer that is robust to other
//! processes competing for the CPU.
//!
//! Each bench target includes this module with `mod common;`, and uses only
//! part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

/// Whether the binary runs real benchmarks (`cargo bench`), not the quick
/// smoke test of `cargo test --benches` or a `--list`.
pub(crate) fn benchmarking() -> bool {
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    has("--bench") && !has("--test") && !has("--list") && !has("--profile-time")
}

/// Criterion's output directory, found the way criterion finds it:
/// `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else the
/// workspace's `target/criterion`.
pub(crate) fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/criterion")
}

/// Criterion's point estimate of `statistic` (`"mean"`, `"median"`) in
/// nanoseconds per iteration for the benchmark `group/function[/parameter]`,
/// if this process wrote it (estimates older than `since` are from an
/// earlier run, for instance one that filtered this benchmark out).
pub(crate) fn estimate_ns(id: &str, statistic: &str, since: SystemTime) -> Option<f64> {
    let path = criterion_dir().join(id).join("new/estimates.json");
    let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
    if modified < since {
        return None;
    }
    let json = std::fs::read_to_string(path).ok()?;
    // {"mean":{"confidence_interval":{...},"point_estimate":12.3,...},"median":{...},...}
    let rest = &json[json.find(&format!("\"{statistic}\""))?..];
    let rest = &rest[rest.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = rest.find([',', '}'])?;
    rest[..end].trim().parse().ok()
}

/// A current-thread tokio runtime with timers, for the async benchmarks.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
}

/// Times `f().await` `iters` times inside one `block_on`, as criterion's
/// async `iter` does.
pub(crate) fn time_async<F: Future>(
    rt: &tokio::runtime::Runtime,
    iters: u64,
    mut f: impl FnMut() -> F,
) -> Duration {
    rt.block_on(async {
        let start = Instant::now();
        for _ in 0..iters {
            std::hint::black_box(f().await);
        }
        start.elapsed()
    })
}

/// Times several routines in interleaved rounds and returns, per routine,
/// the fastest round in nanoseconds per iteration, plus every round's time.
///
/// `routines[i](iters)` runs routine `i` `iters` times and returns the time
/// taken. Each round runs every routine once, in a rotating order, so slow
/// phases caused by other processes hit all routines alike; the minimum over
/// rounds is the least disturbed figure (interference only adds time).
pub(crate) fn interleaved(
    rounds: usize,
    target: Duration,
    routines: &mut [&mut dyn FnMut(u64) -> Duration],
) -> Vec<Rounds> {
    // Calibrate: enough iterations for each routine to take about `target`.
    let iters: Vec<u64> = routines
        .iter_mut()
        .map(|r| {
            let mut n = 1u64;
            loop {
                let t = r(n);
                if t >= target / 10 || n >= 1 << 40 {
                    let per = t.as_secs_f64() / n as f64;
                    break ((target.as_secs_f64() / per.max(1e-12)) as u64).max(1);
                }
                n *= 2;
            }
        })
        .collect();
    let mut out: Vec<Rounds> = iters
        .iter()
        .map(|_| Rounds {
            per_iter_ns: Vec::with_capacity(rounds),
        })
        .collect();
    let k = routines.len();
    for round in 0..rounds {
        for j in 0..k {
            let i = (round + j) % k;
            let t = routines[i](iters[i]);
            out[i]
                .per_iter_ns
                .push(t.as_nanos() as f64 / iters[i] as f64);
        }
    }
    out
}

/// The rounds of one routine in [`interleaved`].
pub(crate) struct Rounds {
    /// Nanoseconds per iteration, one entry per round.
    pub(crate) per_iter_ns: Vec<f64>,
}

impl Rounds {
    /// The fastest round.
    pub(crate) fn min(&self) -> f64 {
        self.per_iter_ns
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
    }

    /// The median round.
    pub(crate) fn median(&self) -> f64 {
        median(self.per_iter_ns.clone())
    }

    /// The median over rounds of `self / base` within the same round: the
    /// ratio least affected by slow phases that last longer than a round.
    pub(crate) fn median_ratio_to(&self, base: &Rounds) -> f64 {
        median(
            self.per_iter_ns
                .iter()
                .zip(&base.per_iter_ns)
                .map(|(a, b)| a / b)
                .collect(),
        )
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Runs `f` `iters` times and returns the time taken.
pub(crate) fn time_sync<O>(iters: u64, mut f: impl FnMut() -> O) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        std::hint::black_box(f());
    }
    start.elapsed()
}

/// CPU seconds (user + system) used so far by this process's finished,
/// waited-for children and their descendants (`cutime + cstime` of
/// `/proc/self/stat`, in the kernel's 100 Hz ticks); `None` off Linux.
/// Less disturbed than wall time by other processes competing for the CPU.
pub(crate) fn children_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces), from
    // field 3 (`state`): `cutime` is field 16, `cstime` field 17.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let cutime: f64 = fields.get(13)?.parse().ok()?;
    let cstime: f64 = fields.get(14)?.parse().ok()?;
    Some((cutime + cstime) / 100.0)
}

/// Runs `command` to completion; returns its output, the wall time, and
/// the CPU time it and its descendants used (`None` off Linux).
pub(crate) fn run_timed(
    command: &mut std::process::Command,
) -> std::io::Result<(std::process::Output, Duration, Option<f64>)> {
    let cpu_before = children_cpu_seconds();
    let start = Instant::now();
    let out = command.output()?;
    let wall = start.elapsed();
    let cpu = match (cpu_before, children_cpu_seconds()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    Ok((out, wall, cpu))
}

/// The wall and CPU seconds of one timed command (CPU is NaN off Linux).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sample {
    pub(crate) wall: f64,
    pub(crate) cpu: f64,
}

/// Prints named series of [`Sample`]s taken in the same interleaved rounds
/// (`samples[i][round]` for `names[i]`): the fastest and median wall and
/// CPU seconds of each, then for each pair `(a, b)` of `pairs` (both
/// present) the median over rounds of `a / b` within the round.
pub(crate) fn report_rounds(
    title: &str,
    names: &[&str],
    samples: &[Vec<Sample>],
    pairs: &[(&str, &str)],
) {
    let wall = |i: usize| samples[i].iter().map(|s| s.wall).collect::<Vec<f64>>();
    let cpu = |i: usize| samples[i].iter().map(|s| s.cpu).collect::<Vec<f64>>();
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "\n{title} (seconds over {} rounds)",
        samples.first().map_or(0, Vec::len)
    );
    println!(
        "  {:<18} {:>9} {:>11} {:>9} {:>11}",
        "", "wall min", "wall median", "CPU min", "CPU median"
    );
    for (i, name) in names.iter().enumerate() {
        println!(
            "  {name:<18} {:>9.2} {:>11.2} {:>9.2} {:>11.2}",
            min(&wall(i)),
            median(wall(i)),
            min(&cpu(i)),
            median(cpu(i)),
        );
    }
    let index = |name: &str| names.iter().position(|n| *n == name);
    let ratio = |a: Vec<f64>, b: Vec<f64>| median(a.iter().zip(&b).map(|(x, y)| x / y).collect());
    for (a, b) in pairs {
        if let (Some(x), Some(y)) = (index(a), index(b)) {
            println!(
                "  {a} / {b}: wall {:.2}, CPU {:.2} (median of per-round ratios)",
                ratio(wall(x), wall(y)),
                ratio(cpu(x), cpu(y)),
            );
        }
    }
}
