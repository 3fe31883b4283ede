//! What `#[retry]` costs at compile time: a generated crate of 200
//! functions (half `async`, ten shapes: methods (a fifth of the functions
//! `&mut self` ones), `&mut` arguments, generics,
//! `impl Trait`, `when`/`on_retry` closures, ...; see
//! `benches/compile/generate.rs`) written three ways with the same bodies:
//! with `#[retry(...)]`, wrapped in backon closures configured alike, and
//! plain. Two more variants build the `#[retry]` crate with the proc macro
//! optimized, as a user can ask in their own `Cargo.toml`:
//!
//! - `retry_opt_macro`: `[profile.dev.package.backoff-macros] opt-level = 3`
//!   (and the same for `release`): the macro crate alone;
//! - `retry_opt_build`: `[profile.dev.build-override] opt-level = 3` (and
//!   `release`): every proc macro and build script and their dependencies
//!   (`syn`, `quote`, `proc-macro2`).
//!
//! ```text
//! cargo bench -p backoff-workspace-tests --bench compile_time                      # 5 rounds, ~6 min (the first run also builds the dependencies)
//! cargo bench -p backoff-workspace-tests --bench compile_time -- --rounds 9
//! cargo bench -p backoff-workspace-tests --bench compile_time -- --variants plain,backon,retry
//! cargo bench -p backoff-workspace-tests --bench compile_time -- --instructions --variants plain,backon,retry   # ~3 min, valgrind
//! cargo bench -p backoff-workspace-tests --bench compile_time -- --instructions --release --variants backon_when,retry_when
//! ```
//!
//! # How it is timed
//!
//! The crates are generated under `target/compile-bench/` (each its own
//! workspace; one shared target directory there, with this repository's
//! `Cargo.lock`, so every variant uses the same dependency versions and
//! features: `backoff-runtime` by path, `backon`, `tokio`). Dependencies are
//! built once, untimed. Then each round touches each variant's `lib.rs` and
//! times `cargo check`, and then `cargo build --release`, for every variant
//! in a rotating order, so a slow phase of the machine hits all variants
//! alike. `CARGO_INCREMENTAL=0`: each timed command compiles the whole
//! crate, as a first build or a CI build does. Times are those of the whole
//! `cargo` command: wall-clock, and CPU (user + system, of cargo and the
//! compilers it runs; on Linux), which other processes disturb less. The
//! summary gives the fastest and median round per variant and, per pair,
//! the median of per-round ratios.
//!
//! # Expansion size
//!
//! Each of `plain`, `backon` and `retry` is also printed by rustc after
//! macro expansion (`cargo rustc -- -Zunpretty=expanded`, with
//! `RUSTC_BOOTSTRAP=1` so the stable toolchain accepts the flag; into a
//! separate target directory): the difference in lines from `plain`, per
//! function, is what the attribute (or the backon wrapper) adds.
//!
//! rustc's own account of where a check's time goes (`-Ztime-passes`: macro
//! expansion, type checking, borrow checking; the fastest of three runs)
//! is printed per variant.
//!
//! # Instructions
//!
//! With `--instructions` (and valgrind on the `PATH`), the bench instead
//! counts the instructions rustc executes to check each crate (the crate
//! alone, its dependencies built: the command `cargo check -v` prints,
//! run again under `valgrind --tool=callgrind`), and, with `--release`, to
//! build it optimized. Unlike times, the counts are the same on a busy
//! machine, run after run, so a ratio of two of them is exact.
//!
//! Under `cargo test --benches` the bench only generates the three crates
//! and checks their shape (200 functions, 100 `async`).

mod common;
#[path = "compile/generate.rs"]
mod generate;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use common::Sample;
use generate::{FUNCTIONS, Variant};

/// A crate to build: its name, source and extra `Cargo.toml` lines.
struct Build {
    name: &'static str,
    variant: Variant,
    profile: &'static str,
}

const BUILDS: [Build; 7] = [
    Build {
        name: "plain",
        variant: Variant::Plain,
        profile: "",
    },
    Build {
        name: "backon",
        variant: Variant::Backon,
        profile: "",
    },
    Build {
        name: "retry",
        variant: Variant::Retry,
        profile: "",
    },
    Build {
        name: "backon_when",
        variant: Variant::BackonWhen,
        profile: "",
    },
    Build {
        name: "retry_when",
        variant: Variant::RetryWhen,
        profile: "",
    },
    Build {
        name: "retry_opt_macro",
        variant: Variant::Retry,
        profile: "
[profile.dev.package.backoff-macros]
opt-level = 3

[profile.release.package.backoff-macros]
opt-level = 3
",
    },
    Build {
        name: "retry_opt_build",
        variant: Variant::Retry,
        profile: "
[profile.dev.build-override]
opt-level = 3

[profile.release.build-override]
opt-level = 3
",
    },
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn work_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"));
    target.join("compile-bench")
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// Writes the crate of `build` under `dir`; returns its directory.
fn write_crate(dir: &Path, build: &Build) -> std::io::Result<PathBuf> {
    let root = dir.join(build.name);
    std::fs::create_dir_all(root.join("src"))?;
    let runtime = repo().join("backoff-runtime");
    let manifest = format!(
        r#"# Generated by benches/compile_time.rs; do not edit.
[package]
name = "compile-bench-{name}"
version = "0.0.0"
edition = "2024"
publish = false

[lib]
path = "src/lib.rs"

[dependencies]
backoff-runtime = {{ path = "{runtime}" }}
backon = "1.6.0"
tokio = {{ version = "1.54.1", default-features = false, features = ["time"] }}

[workspace]
{profile}"#,
        name = build.name,
        runtime = runtime.display(),
        profile = build.profile,
    );
    write_if_changed(&root.join("Cargo.toml"), &manifest)?;
    // The repository's lock: the same versions in every variant.
    let lock = std::fs::read_to_string(repo().join("Cargo.lock"))?;
    if !root.join("Cargo.lock").exists() {
        std::fs::write(root.join("Cargo.lock"), lock)?;
    }
    write_if_changed(
        &root.join("src/lib.rs"),
        &generate::crate_source(build.variant),
    )?;
    Ok(root)
}

fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// Marks the crate's source as changed, so the next build compiles it.
fn touch(root: &Path) -> std::io::Result<()> {
    std::fs::File::options()
        .append(true)
        .open(root.join("src/lib.rs"))?
        .set_modified(SystemTime::now())
}

/// `cargo <args>` in `root`, with the bench's shared target directory, not
/// incremental, its output dropped and its messages kept.
fn cargo_command(root: &Path, target: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(cargo());
    command
        .args(args)
        .arg("--target-dir")
        .arg(target)
        .current_dir(root)
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("CARGO_TARGET_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// Runs `cargo <args>` in `root` ([`cargo_command`]); returns the time it
/// took.
fn run_cargo(root: &Path, target: &Path, args: &[&str]) -> Result<Sample, String> {
    let (out, wall, cpu) = common::run_timed(&mut cargo_command(root, target, args))
        .map_err(|e| format!("running cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo {}` failed in {}:\n{}",
            args.join(" "),
            root.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(Sample {
        wall: wall.as_secs_f64(),
        cpu: cpu.unwrap_or(f64::NAN),
    })
}

/// Lines of the crate in `root` after macro expansion.
fn expanded_lines(root: &Path, target: &Path) -> Result<usize, String> {
    let out = Command::new(cargo())
        .args(["rustc", "--lib", "--profile", "check", "-q", "--target-dir"])
        .arg(target)
        .args(["--", "-Zunpretty=expanded"])
        .current_dir(root)
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove("CARGO_TARGET_DIR")
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("running cargo rustc: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count())
}

/// The instructions rustc executes to compile the crate in `root` (its
/// dependencies built): the `rustc` command of `cargo <args> -v`, run again
/// under callgrind.
fn instructions(root: &Path, target: &Path, args: &[&str]) -> Result<u64, String> {
    touch(root).map_err(|e| e.to_string())?;
    let out = cargo_command(root, target, args)
        .arg("-v")
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    // `Running `rustc --crate-name compile_bench_.. ..``: shell-quoted.
    let command = stderr
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Running `"))
        .rfind(|l| l.contains("--crate-name compile_bench_"))
        .and_then(|l| l.strip_suffix('`'))
        .ok_or_else(|| format!("no rustc command in:\n{stderr}"))?
        // The JSON messages are cargo's to read, not ours.
        .replace(
            "--error-format=json --json=diagnostic-rendered-ansi,artifacts,future-incompat",
            "",
        );
    let file = target.join("callgrind.out");
    let run = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "valgrind --tool=callgrind --callgrind-out-file={} {command}",
            file.display()
        ))
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("running valgrind: {e}"))?;
    if !run.status.success() {
        return Err(String::from_utf8_lossy(&run.stderr).into_owned());
    }
    let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    text.lines()
        .find_map(|l| l.strip_prefix("summary: "))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| "no summary in callgrind's output".to_owned())
}

/// The phases rustc reports with `-Ztime-passes` when it checks the crate
/// in `root` (compiled anew): seconds of macro expansion, type checking,
/// borrow checking, and in all.
fn phases(root: &Path, target: &Path) -> Result<[f64; 4], String> {
    // The fastest of three runs, phase by phase.
    let mut best = [f64::INFINITY; 4];
    for _ in 0..3 {
        for (b, t) in best.iter_mut().zip(phases_once(root, target)?) {
            *b = b.min(t);
        }
    }
    Ok(best)
}

fn phases_once(root: &Path, target: &Path) -> Result<[f64; 4], String> {
    touch(root).map_err(|e| e.to_string())?;
    let out = Command::new(cargo())
        .args(["rustc", "--lib", "--profile", "check", "-q", "--target-dir"])
        .arg(target)
        .args(["--", "-Ztime-passes"])
        .current_dir(root)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("CARGO_TARGET_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("running cargo rustc: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    // time:   0.445; rss:   46MB ->   84MB (  +39MB)\texpand_crate
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let time = |pass: &str| {
        text.lines()
            .rev()
            .filter(|l| l.split_whitespace().next_back() == Some(pass))
            .filter_map(|l| {
                l.strip_prefix("time:")?
                    .split(';')
                    .next()?
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
            .next()
            .unwrap_or(f64::NAN)
    };
    Ok([
        time("expand_crate"),
        time("type_check_crate"),
        time("MIR_borrow_checking"),
        time("total"),
    ])
}

/// The rounds of one command for every build: `samples[build][round]`.
fn rounds(
    roots: &[(usize, PathBuf)],
    target: &Path,
    args: &[&str],
    rounds: usize,
) -> Result<Vec<Vec<Sample>>, String> {
    let k = roots.len();
    let mut samples = vec![Vec::with_capacity(rounds); k];
    for round in 0..rounds {
        for j in 0..k {
            let b = (round + j) % k;
            let root = &roots[b].1;
            touch(root).map_err(|e| e.to_string())?;
            samples[b].push(run_cargo(root, target, args)?);
        }
        eprint!(".");
    }
    eprintln!();
    Ok(samples)
}

/// The pairs whose ratios the summary gives.
const PAIRS: [(&str, &str); 7] = [
    ("retry", "backon"),
    ("retry_when", "backon_when"),
    ("retry", "plain"),
    ("backon", "plain"),
    ("retry_opt_macro", "retry"),
    ("retry_opt_build", "retry"),
    ("retry_opt_build", "backon"),
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let benchmarking = args.iter().any(|a| a == "--bench");
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if !benchmarking {
        // `cargo test --benches`: the generator's shape only.
        for variant in [
            Variant::Plain,
            Variant::Backon,
            Variant::Retry,
            Variant::BackonWhen,
            Variant::RetryWhen,
        ] {
            let src = generate::crate_source(variant);
            for i in 0..FUNCTIONS {
                let asyncness = if i % 2 == 1 { "async " } else { "" };
                assert!(
                    src.contains(&format!("pub {asyncness}fn f{i}"))
                        || src.contains(&format!("pub {asyncness}fn m{i}")),
                    "{variant:?}: function {i}"
                );
            }
            assert_eq!(
                src.matches("(&mut self,").count(),
                FUNCTIONS / 5,
                "{variant:?}: a fifth `&mut self` methods"
            );
            let attributes = src.matches("#[retry(").count();
            let expected = if variant.is_retry() { FUNCTIONS } else { 0 };
            assert_eq!(attributes, expected, "{variant:?}");
            if matches!(variant, Variant::RetryWhen | Variant::BackonWhen) {
                let hooks = src.matches("when = ").count() + src.matches(".when(").count();
                assert_eq!(hooks, FUNCTIONS, "{variant:?}: a `when` on every function");
            }
        }
        println!(
            "compile_time: generated the five crates (run `cargo bench -p backoff-workspace-tests --bench compile_time` to time them)"
        );
        return;
    }
    let n_rounds: usize = value("--rounds").and_then(|v| v.parse().ok()).unwrap_or(5);
    let selected: Vec<usize> = match value("--variants") {
        Some(list) => list
            .split(',')
            .map(|name| {
                BUILDS
                    .iter()
                    .position(|b| b.name == name)
                    .unwrap_or_else(|| panic!("unknown variant {name}"))
            })
            .collect(),
        None => (0..BUILDS.len()).collect(),
    };
    let dir = work_dir();
    let target = dir.join("target");
    let roots: Vec<(usize, PathBuf)> = selected
        .iter()
        .map(|&b| (b, write_crate(&dir, &BUILDS[b]).expect("writing the crate")))
        .collect();
    println!(
        "compile_time: {FUNCTIONS} functions ({} async) per crate, under {}",
        FUNCTIONS / 2,
        dir.display()
    );

    // Dependencies first, untimed (and a first compile of each crate).
    eprintln!("building dependencies (untimed)...");
    for (_, root) in &roots {
        for args in [&["check"][..], &["build", "--release"][..]] {
            if let Err(e) = run_cargo(root, &target, args) {
                panic!("{e}");
            }
        }
    }

    if args.iter().any(|a| a == "--instructions") {
        let modes: &[(&str, &[&str])] = if args.iter().any(|a| a == "--release") {
            &[("check", &["check"]), ("release", &["build", "--release"])]
        } else {
            &[("check", &["check"])]
        };
        for (mode, cargo_args) in modes {
            println!(
                "\ninstructions rustc executes for `cargo {}` (callgrind):",
                cargo_args.join(" ")
            );
            let mut counts = Vec::new();
            for (b, root) in &roots {
                match instructions(root, &target, cargo_args) {
                    Ok(n) => {
                        println!("  {:<16} {n:>15}", BUILDS[*b].name);
                        counts.push((BUILDS[*b].name, n));
                    }
                    Err(e) => println!("  {}: failed: {e}", BUILDS[*b].name),
                }
            }
            for (a, b) in PAIRS {
                let find = |name: &str| counts.iter().find(|(n, _)| *n == name).map(|(_, c)| *c);
                if let (Some(x), Some(y)) = (find(a), find(b)) {
                    println!("  {mode}: {a} / {b}: {:.3}", x as f64 / y as f64);
                }
            }
        }
        return;
    }

    // Expansion size.
    let expand_target = dir.join("expand-target");
    let mut lines = Vec::new();
    for (b, root) in &roots {
        if BUILDS[*b].profile.is_empty() {
            match expanded_lines(root, &expand_target) {
                Ok(n) => lines.push((BUILDS[*b].name, n)),
                Err(e) => println!("  expansion of {}: failed: {e}", BUILDS[*b].name),
            }
        }
    }
    if let Some(&(_, plain)) = lines.iter().find(|(n, _)| *n == "plain") {
        println!(
            "\nexpanded source (rustc -Zunpretty=expanded, non-blank lines): plain {plain} ({:.1} per fn)",
            plain as f64 / FUNCTIONS as f64
        );
        for (name, n) in &lines {
            if *name != "plain" {
                println!(
                    "  {name:<8} {n} lines: {:+.1} lines per fn over plain",
                    (*n as f64 - plain as f64) / FUNCTIONS as f64
                );
            }
        }
    }

    println!(
        "\nrustc's phases in `cargo check` (-Ztime-passes, RUSTC_BOOTSTRAP=1; fastest of 3 runs, seconds):"
    );
    println!(
        "  {:<16} {:>7} {:>11} {:>13} {:>7}",
        "variant", "expand", "type check", "borrow check", "total"
    );
    for (b, root) in &roots {
        match phases(root, &expand_target) {
            Ok([expand, typeck, borrowck, total]) => println!(
                "  {:<16} {expand:>7.2} {typeck:>11.2} {borrowck:>13.2} {total:>7.2}",
                BUILDS[*b].name
            ),
            Err(e) => println!("  {}: failed: {e}", BUILDS[*b].name),
        }
    }

    eprintln!("timing `cargo check`, {n_rounds} rounds");
    let check = rounds(&roots, &target, &["check"], n_rounds).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("timing `cargo build --release`, {n_rounds} rounds");
    let release = rounds(&roots, &target, &["build", "--release"], n_rounds)
        .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = roots.iter().map(|(b, _)| BUILDS[*b].name).collect();
    common::report_rounds("cargo check (CARGO_INCREMENTAL=0)", &names, &check, &PAIRS);
    common::report_rounds("cargo build --release", &names, &release, &PAIRS);
}
