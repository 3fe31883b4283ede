//! A durable job queue on a real PostgreSQL server, its retries scheduled by
//! `Policy::delay_for` with `Jitter::Spread` on Sidekiq's schedule.
//!
//! ```text
//! cargo run -p backoff-postgres-tests --example job_queue
//! cargo run -p backoff-postgres-tests --example job_queue -- --jobs 500 --workers 4
//! ```
//!
//! The example starts a throwaway server (as the tests do), creates the
//! tables of `backoff_postgres_tests::queue`, enqueues the jobs (job `i`
//! fails its first `(i · 7919) mod 8` runs), and starts the workers as
//! processes of their own: it runs itself again with `--worker`. Each
//! worker claims the earliest due job with `FOR UPDATE SKIP LOCKED`, runs
//! it, and in the same transaction finishes it, reschedules it at
//! `now + delay_for(attempts, id)`, or after its 6th failed run moves it to
//! the dead set. Sidekiq's schedule is counted in 10 ms units, so the
//! whole queue drains in a few seconds.
//!
//! Then it reads the log of every run, and prints, per retry, the delay
//! `delay_for` asked and the wait measured between the end of a run and the
//! start of the next; it fails when a job was lost or run twice, or a retry
//! started before its `run_at`.
//!
//! The waits match while the workers keep up. All the jobs are due at once
//! at the start, so a herd of first runs larger than the workers drain
//! before the first retries fall due delays those retries: with 200 jobs on
//! a loaded 2-core machine (a debug build, ~15 ms a run), the first retries
//! started 0.65 s late (median), the second 0.41 s, and from the third on,
//! once spread had evened the load, 3 to 7 ms, as with 60 jobs throughout.

use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use backoff_postgres_tests::PgServer;
use backoff_postgres_tests::queue::{self, WorkerArgs};

const USAGE: &str = "usage: job_queue [--jobs N] [--workers W]";
const UNIT: Duration = Duration::from_millis(10);
const ATTEMPTS: u32 = 6;
const WORK: Duration = Duration::from_millis(1);

fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--worker") {
        let worker = WorkerArgs::parse(args.skip(1))?;
        let report = worker.run()?;
        println!("{} {} {}", report.runs, report.done, report.dead);
        return Ok(ExitCode::SUCCESS);
    }
    let (mut jobs, mut workers) = (60i64, 3usize);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(USAGE)?;
        match arg.as_str() {
            "--jobs" => jobs = value.parse().map_err(|_| USAGE)?,
            "--workers" => workers = value.parse().map_err(|_| USAGE)?,
            _ => return Err(USAGE.into()),
        }
    }
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(run(jobs, workers))
}

async fn run(count: i64, workers: usize) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let server = PgServer::start()?;
    let client = server.connect().await?;
    queue::create(&client).await?;
    let jobs: Vec<(i64, i32)> = (1..=count).map(|id| (id, (id * 7919 % 8) as i32)).collect();
    queue::enqueue(&client, &jobs).await?;
    println!(
        "{count} jobs, {workers} worker processes, Sidekiq's schedule in {UNIT:?} units, spread, {ATTEMPTS} attempts"
    );
    let me = std::env::current_exe()?;
    let children = (1..=workers)
        .map(|w| {
            let args = WorkerArgs {
                port: server.port(),
                worker: format!("w{w}"),
                unit: UNIT,
                attempts: ATTEMPTS,
                work: WORK,
            };
            Command::new(&me)
                .arg("--worker")
                .args(args.to_args())
                .stdout(Stdio::piped())
                .spawn()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let outputs = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|c| c.wait_with_output())
            .collect::<Result<Vec<_>, _>>()
    })
    .await??;
    for (w, output) in outputs.iter().enumerate() {
        if !output.status.success() {
            return Err(format!("worker w{} failed: {}", w + 1, output.status).into());
        }
    }

    let runs = queue::runs(&client).await?;
    let (done, dead) = queue::outcomes(&client).await?;
    let policy = queue::policy(UNIT, ATTEMPTS);
    let audit = queue::audit(&jobs, &policy, &runs, &done, &dead);
    println!(
        "runs {}, finished {}, dead {}, still queued {}; runs per worker {:?}",
        runs.len(),
        audit.done,
        audit.dead,
        queue::queued(&client).await?,
        audit.workers
    );
    println!(
        "lost {}, run twice {}, misscheduled {}, started early {}\n",
        audit.lost.len(),
        audit.twice.len(),
        audit.misscheduled.len(),
        audit.early.len()
    );
    println!(
        "| retry | waits | delay_for, mean | measured wait, mean | late, median | late, max |"
    );
    println!("|---|---|---|---|---|---|");
    for retry in 1..ATTEMPTS {
        let gaps: Vec<_> = audit.gaps.iter().filter(|g| g.retry == retry).collect();
        if gaps.is_empty() {
            continue;
        }
        let n = gaps.len() as u32;
        let delay: Duration = gaps.iter().map(|g| g.delay).sum::<Duration>() / n;
        let waited: Duration = gaps.iter().map(|g| g.waited).sum::<Duration>() / n;
        let mut late: Vec<Duration> = gaps.iter().map(|g| g.late()).collect();
        late.sort();
        println!(
            "| {retry} | {n} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms |",
            ms(delay),
            ms(waited),
            ms(late[late.len() / 2]),
            ms(late[late.len() - 1])
        );
    }
    if !audit.clean() {
        eprintln!("error: the log does not add up: {audit:#?}");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
