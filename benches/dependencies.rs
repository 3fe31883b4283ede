//! What a user's clean build of `backoff-runtime` (default features) pulls
//! in and costs, against backon (default features), in scratch crates
//! outside the repository.
//!
//! ```text
//! cargo bench -p backoff-workspace-tests --bench dependencies                       # 5 rounds, debug and release, ~5 min
//! cargo bench -p backoff-workspace-tests --bench dependencies -- --rounds 9 --debug-only
//! cargo bench -p backoff-workspace-tests --bench dependencies -- --compare /path/to/another/checkout/backoff-runtime
//! ```
//!
//! Under the system's temporary directory (`backoff-deps-bench/`), each
//! variant is a crate of its own (its own workspace, target directory and a
//! copy of the `Cargo.lock` of the repository it comes from, so the
//! versions are pinned) with one sync and one `async` function using the
//! library:
//!
//! - `ours`: `backoff-runtime = { path = ".../backoff-runtime" }`, one
//!   `#[retry]` each;
//! - `ours_opt_build`: the same, with `[profile.*.build-override]
//!   opt-level = 3` (the proc macro and `syn` optimized: what a faster
//!   `cargo check` of many annotated functions costs once, in the clean
//!   build);
//! - `backon`: `backon = "1.6.0"`, `.retry(ExponentialBuilder::default())`;
//! - with `--compare PATH`, `ours_other`: `backoff-runtime` from `PATH`
//!   (another checkout, say before a change), to compare in the same run.
//!
//! For each, the bench prints the crates a clean build compiles (cargo's
//! `Compiling` lines, the crate itself excluded) and the dependency tree's
//! packages (`cargo tree -e normal,build`), then times clean builds
//! (`cargo clean`, then `cargo build`, `--release` too) in rounds that
//! alternate the variants in a rotating order: wall and CPU seconds (CPU:
//! user + system of cargo and the compilers it runs, on Linux; less
//! disturbed than wall time by other processes), fastest and median, and
//! the median of per-round ratios. The sources are fetched first, untimed.
//!
//! Under `cargo test --benches` it only writes the scratch crates.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::Sample;

struct Variant {
    name: String,
    dependency: String,
    /// The repository whose `Cargo.lock` pins the versions.
    lock_from: PathBuf,
    profile: &'static str,
    source: &'static str,
}

const OURS_SOURCE: &str = r#"use backoff_runtime::retry;

#[derive(Debug)]
pub struct Error;

#[retry]
pub fn sync_call(x: u64) -> Result<u64, Error> {
    if x == 0 { Err(Error) } else { Ok(x) }
}

#[retry(exponential(base = "10ms", max = "1s"), attempts = 5)]
pub async fn async_call(x: u64) -> Result<u64, Error> {
    if x == 0 { Err(Error) } else { Ok(x) }
}
"#;

const BACKON_SOURCE: &str = r#"use backon::{BlockingRetryable, ExponentialBuilder, Retryable};
use std::time::Duration;

#[derive(Debug)]
pub struct Error;

pub fn sync_call(x: u64) -> Result<u64, Error> {
    (|| if x == 0 { Err(Error) } else { Ok(x) })
        .retry(ExponentialBuilder::default())
        .call()
}

pub async fn async_call(x: u64) -> Result<u64, Error> {
    (|| async { if x == 0 { Err(Error) } else { Ok(x) } })
        .retry(
            ExponentialBuilder::default()
                .with_min_delay(Duration::from_millis(10))
                .with_max_delay(Duration::from_secs(1))
                .with_max_times(4),
        )
        .await
}
"#;

const OPT_BUILD: &str = "
[profile.dev.build-override]
opt-level = 3

[profile.release.build-override]
opt-level = 3
";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn variants(compare: Option<PathBuf>) -> Vec<Variant> {
    let runtime = repo().join("backoff-runtime");
    let ours = format!("backoff-runtime = {{ path = {:?} }}", runtime.display());
    let mut v = vec![
        Variant {
            name: "ours".into(),
            dependency: ours.clone(),
            lock_from: repo(),
            profile: "",
            source: OURS_SOURCE,
        },
        Variant {
            name: "ours_opt_build".into(),
            dependency: ours,
            lock_from: repo(),
            profile: OPT_BUILD,
            source: OURS_SOURCE,
        },
        Variant {
            name: "backon".into(),
            dependency: "backon = \"1.6.0\"".into(),
            lock_from: repo(),
            profile: "",
            source: BACKON_SOURCE,
        },
    ];
    if let Some(other) = compare {
        v.push(Variant {
            name: "ours_other".into(),
            dependency: format!("backoff-runtime = {{ path = {:?} }}", other.display()),
            lock_from: other
                .parent()
                .map_or_else(|| other.clone(), Path::to_path_buf),
            profile: "",
            source: OURS_SOURCE,
        });
    }
    v
}

/// Writes the scratch crate of `v`; returns its directory.
fn write_crate(dir: &Path, v: &Variant) -> std::io::Result<PathBuf> {
    let root = dir.join(&v.name);
    std::fs::create_dir_all(root.join("src"))?;
    let manifest = format!(
        "# Generated by benches/dependencies.rs.
[package]
name = \"deps-bench-{name}\"
version = \"0.0.0\"
edition = \"2024\"
publish = false

[dependencies]
{dependency}

[workspace]
{profile}",
        name = v.name.replace('_', "-"),
        dependency = v.dependency,
        profile = v.profile,
    );
    std::fs::write(root.join("Cargo.toml"), manifest)?;
    std::fs::write(root.join("src/lib.rs"), v.source)?;
    let lock = v.lock_from.join("Cargo.lock");
    if lock.exists() {
        std::fs::copy(lock, root.join("Cargo.lock"))?;
    }
    Ok(root)
}

fn cargo_in(root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(cargo());
    c.args(args)
        .current_dir(root)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn checked(out: std::process::Output, what: &str) -> Result<std::process::Output, String> {
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!(
            "{what} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A clean build: `cargo clean`, then `cargo build [args]`, timed; also
/// returns the packages compiled (the crate itself excluded).
fn clean_build(root: &Path, args: &[&str]) -> Result<(Sample, Vec<String>), String> {
    checked(
        cargo_in(root, &["clean", "-q"])
            .output()
            .map_err(|e| e.to_string())?,
        "cargo clean",
    )?;
    let mut build = vec!["build"];
    build.extend_from_slice(args);
    let (out, wall, cpu) =
        common::run_timed(&mut cargo_in(root, &build)).map_err(|e| e.to_string())?;
    let out = checked(out, "cargo build")?;
    let compiled = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Compiling "))
        .filter(|l| !l.starts_with("deps-bench-"))
        .map(|l| l.split(" (").next().unwrap_or(l).to_owned())
        .collect();
    Ok((
        Sample {
            wall: wall.as_secs_f64(),
            cpu: cpu.unwrap_or(f64::NAN),
        },
        compiled,
    ))
}

/// The packages of the dependency tree, the crate itself excluded.
fn tree(root: &Path) -> Result<Vec<String>, String> {
    let out = checked(
        cargo_in(
            root,
            &[
                "tree",
                "-e",
                "normal,build",
                "--prefix",
                "none",
                "--format",
                "{p}",
            ],
        )
        .output()
        .map_err(|e| e.to_string())?,
        "cargo tree",
    )?;
    let mut packages: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_end_matches(" (*)").to_owned())
        .filter(|l| !l.is_empty() && !l.starts_with("deps-bench-"))
        .map(|l| l.split(" (").next().unwrap_or(&l).to_owned())
        .collect();
    packages.sort();
    packages.dedup();
    Ok(packages)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let dir = std::env::temp_dir().join("backoff-deps-bench");
    let variants = variants(value("--compare").map(PathBuf::from));
    let roots: Vec<PathBuf> = variants
        .iter()
        .map(|v| write_crate(&dir, v).expect("writing a scratch crate"))
        .collect();
    if !args.iter().any(|a| a == "--bench") {
        println!(
            "dependencies: wrote the scratch crates under {} (run `cargo bench -p backoff-workspace-tests --bench dependencies` to build them)",
            dir.display()
        );
        return;
    }
    let n_rounds: usize = value("--rounds").and_then(|v| v.parse().ok()).unwrap_or(5);
    let profiles: &[(&str, &[&str])] = if args.iter().any(|a| a == "--debug-only") {
        &[("debug", &[])]
    } else {
        &[("debug", &[]), ("release", &["--release"])]
    };
    println!("dependencies: scratch crates under {}", dir.display());
    for (v, root) in variants.iter().zip(&roots) {
        checked(
            cargo_in(root, &["fetch", "-q"])
                .output()
                .expect("running cargo fetch"),
            "cargo fetch",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let packages = tree(root).unwrap_or_else(|e| panic!("{e}"));
        println!(
            "\n{}: {} packages in `cargo tree -e normal,build`: {}",
            v.name,
            packages.len(),
            packages.join(", ")
        );
    }
    let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
    let pairs = [
        ("ours", "backon"),
        ("ours_opt_build", "ours"),
        ("ours", "ours_other"),
    ];
    for (profile, flags) in profiles {
        let k = roots.len();
        let mut samples = vec![Vec::with_capacity(n_rounds); k];
        let mut compiled = vec![Vec::new(); k];
        eprint!("clean {profile} builds, {n_rounds} rounds: ");
        for round in 0..n_rounds {
            for j in 0..k {
                let i = (round + j) % k;
                let (sample, crates) =
                    clean_build(&roots[i], flags).unwrap_or_else(|e| panic!("{e}"));
                samples[i].push(sample);
                compiled[i] = crates;
            }
            eprint!(".");
        }
        eprintln!();
        println!("\nclean {profile} build, crates compiled (the crate itself excluded):");
        for (name, crates) in names.iter().zip(&compiled) {
            println!("  {name:<16} {:>3}: {}", crates.len(), crates.join(", "));
        }
        common::report_rounds(&format!("clean {profile} build"), &names, &samples, &pairs);
    }
}
