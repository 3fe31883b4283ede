//! The AWS thundering-herd experiment ("Exponential Backoff And Jitter"),
//! on a real PostgreSQL server instead of the simulator of
//! `examples/herd.rs`.
//!
//! ```text
//! cargo run -p backoff-postgres-tests --release --example pg_herd                # 100 writers, 3 runs
//! cargo run -p backoff-postgres-tests --release --example pg_herd -- --writers 100 --runs 10
//! cargo run -p backoff-postgres-tests --release --example pg_herd -- --strategy full --json
//! ```
//!
//! The example starts a throwaway server of its own (`initdb` and `pg_ctl`
//! from Debian's `postgresql` package, on a free port of 127.0.0.1) and
//! stops it at the end. N writers, each with a connection of its own, start
//! at the same instant, and each adds one to a single counter row, once, in
//! a `SERIALIZABLE` transaction (read the value, write value + 1, commit).
//! Two writers that read the same value cannot both commit: PostgreSQL
//! fails one with a serialization failure (SQLSTATE `40001`), and
//! `#[retry(.., when = is_conflict)]` runs its whole transaction again
//! after the strategy's delay. These are the simulator's five strategies,
//! written as attributes (see `Writer` in the package's library):
//!
//! | strategy | attribute |
//! |---|---|
//! | none | `immediate` |
//! | exponential | `exponential(base = "10ms", max = "2s"), jitter = "none"` |
//! | full | `exponential(base = "10ms", max = "2s"), jitter = "full"` |
//! | equal | `exponential(base = "10ms", max = "2s"), jitter = "equal"` |
//! | decorrelated | `decorrelated(base = "5ms", max = "2s")` |
//!
//! each with `attempts = unlimited, max_elapsed = "60s", when = is_conflict`.
//!
//! Per strategy it prints the transactions started (the simulator's
//! "calls": every attempt, failed ones included) and the completion time
//! (from the start until the last writer's commit succeeded), averaged
//! over the runs, with their range. After every run the counter must equal
//! the number of writers: a lost update ends the program with an error.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use backoff_postgres_tests::PgServer;
use backoff_postgres_tests::herd::{self, Strategy, Writer};
use tokio::sync::Barrier;

/// Command-line options.
struct Options {
    writers: usize,
    runs: u32,
    strategies: Vec<Strategy>,
    json: bool,
}

const USAGE: &str = "usage: pg_herd [--writers N] [--runs R] [--strategy none|exponential|full|equal|decorrelated]... [--json]";

/// The server's `max_connections` is 300; a few stay free for the admin
/// connection.
const MAX_WRITERS: usize = 250;

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        writers: 100,
        runs: 3,
        strategies: Vec::new(),
        json: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--writers" => options.writers = parse(&value("--writers")?, "--writers")?,
            "--runs" => options.runs = parse(&value("--runs")?, "--runs")?,
            "--strategy" => {
                let name = value("--strategy")?;
                let strategy = Strategy::ALL
                    .into_iter()
                    .find(|s| s.name() == name)
                    .ok_or_else(|| format!("unknown strategy `{name}`"))?;
                options.strategies.push(strategy);
            }
            "--json" => options.json = true,
            "-h" | "--help" => return Err(String::new()), // not an error: usage
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.writers == 0 || options.runs == 0 {
        return Err("--writers and --runs must be at least 1".into());
    }
    if options.writers > MAX_WRITERS {
        return Err(format!("--writers must be at most {MAX_WRITERS}"));
    }
    if options.strategies.is_empty() {
        options.strategies = Strategy::ALL.to_vec();
    }
    Ok(options)
}

fn parse<T: std::str::FromStr>(text: &str, name: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{name}: `{text}` is not a valid number"))
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(message) if message.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("pg_herd: {message}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match run(&options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("pg_herd: {message}");
            ExitCode::FAILURE
        }
    }
}

/// What one run of one strategy measured.
#[derive(Debug, Clone, Copy)]
struct Outcome {
    /// Transactions started, failed ones included.
    calls: u32,
    /// From the start until the last writer's commit.
    completion: Duration,
}

async fn run(options: &Options) -> Result<(), String> {
    // Started on a blocking thread: it waits for initdb and pg_ctl.
    let server = tokio::task::spawn_blocking(PgServer::start)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let admin = server.connect().await.map_err(|e| e.to_string())?;
    let version: String = admin
        .query_one("SHOW server_version", &[])
        .await
        .map_err(|e| e.to_string())?
        .get(0);
    let mut writers = Vec::with_capacity(options.writers);
    for _ in 0..options.writers {
        let client = server.connect().await.map_err(|e| e.to_string())?;
        writers.push(Writer::new(client));
    }

    if !options.json {
        println!(
            "PostgreSQL {version} on 127.0.0.1:{}: {} writers, SERIALIZABLE, {}",
            server.port(),
            options.writers,
            match options.runs {
                1 => "1 run".to_owned(),
                runs => format!("mean of {runs} runs"),
            }
        );
        println!(
            "{:<14} {:>8} {:>12} {:>13} {:>16} {:>15}",
            "strategy", "writers", "mean calls", "(min-max)", "mean completion", "(min-max)"
        );
    }
    for &strategy in &options.strategies {
        let mut outcomes = Vec::with_capacity(options.runs as usize);
        for _ in 0..options.runs {
            herd::reset_counter(&admin)
                .await
                .map_err(|e| e.to_string())?;
            let (outcome, back) = race(strategy, writers).await?;
            writers = back;
            let counter = herd::counter(&admin).await.map_err(|e| e.to_string())?;
            if counter != options.writers as i64 {
                return Err(format!(
                    "lost update: {} writers committed, the counter is {counter}",
                    options.writers
                ));
            }
            outcomes.push(outcome);
        }
        print_row(options, strategy, &outcomes);
    }
    Ok(())
}

/// One run: every writer increments the counter once, all starting
/// together. Gives the writers back for the next run.
async fn race(strategy: Strategy, writers: Vec<Writer>) -> Result<(Outcome, Vec<Writer>), String> {
    let start = Arc::new(Barrier::new(writers.len() + 1));
    let tasks: Vec<_> = writers
        .into_iter()
        .map(|mut writer| {
            let start = Arc::clone(&start);
            tokio::spawn(async move {
                writer.attempts = 0;
                start.wait().await;
                let result = writer.increment(strategy).await;
                (result.map(|_| Instant::now()), writer)
            })
        })
        .collect();
    start.wait().await;
    let began = Instant::now();

    let mut outcome = Outcome {
        calls: 0,
        completion: Duration::ZERO,
    };
    let mut back = Vec::with_capacity(tasks.len());
    for task in tasks {
        let (done, writer) = task.await.map_err(|e| e.to_string())?;
        let done = done.map_err(|e| {
            format!(
                "{}: a writer gave up after {} attempts: {e}",
                strategy.name(),
                writer.attempts
            )
        })?;
        outcome.calls += writer.attempts;
        outcome.completion = outcome
            .completion
            .max(done.saturating_duration_since(began));
        back.push(writer);
    }
    Ok((outcome, back))
}

fn print_row(options: &Options, strategy: Strategy, outcomes: &[Outcome]) {
    let runs = outcomes.len() as f64;
    let calls = outcomes.iter().map(|o| f64::from(o.calls)).sum::<f64>() / runs;
    let seconds: Vec<f64> = outcomes
        .iter()
        .map(|o| o.completion.as_secs_f64())
        .collect();
    let completion = seconds.iter().sum::<f64>() / runs;
    let min_calls = outcomes.iter().map(|o| o.calls).min().unwrap_or(0);
    let max_calls = outcomes.iter().map(|o| o.calls).max().unwrap_or(0);
    let min_s = seconds.iter().copied().fold(f64::INFINITY, f64::min);
    let max_s = seconds.iter().copied().fold(0.0, f64::max);
    if options.json {
        println!(
            r#"{{"strategy": "{}", "clients": {}, "runs": {}, "calls": {:.2}, "calls_min": {}, "calls_max": {}, "completion_s": {:.4}, "completion_min_s": {:.4}, "completion_max_s": {:.4}}}"#,
            strategy.name(),
            options.writers,
            outcomes.len(),
            calls,
            min_calls,
            max_calls,
            completion,
            min_s,
            max_s
        );
    } else {
        println!(
            "{:<14} {:>8} {:>12.1} {:>13} {:>14.3} s {:>15}",
            strategy.name(),
            options.writers,
            calls,
            format!("({min_calls}-{max_calls})"),
            completion,
            format!("({min_s:.2}-{max_s:.2} s)")
        );
    }
}
