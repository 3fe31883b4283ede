//! A durable job queue on PostgreSQL whose retries are scheduled by
//! [`Policy::delay_for`]: the table keeps only each job's attempt count and
//! when it runs next.
//!
//! - `jobs (id, attempts, run_at, fail_first)`: the queue. `attempts`
//!   counts the failed runs; `fail_first` is the test payload, how many
//!   runs fail before one succeeds.
//! - Workers, each a process with a connection of its own, claim the
//!   earliest due job with `SELECT … FOR UPDATE SKIP LOCKED` in a
//!   transaction, run it, and in the same transaction either move it to
//!   `done_jobs`, or reschedule it at `now + delay_for(attempts, id)`, or,
//!   after its last attempt, move it to the dead set `dead_jobs`.
//! - Every run is logged in `job_runs` (job, attempt, worker, start, end,
//!   outcome, the `run_at` it was given), in that same transaction: so the
//!   log says whether a job was lost or run twice, and how long each job
//!   waited against what `delay_for` asked.

use std::time::{Duration, SystemTime};

use backoff_runtime::strategy::Sidekiq;
use backoff_runtime::{Jitter, Policy};
use tokio_postgres::{Client, Config, Error, NoTls};

/// The tables.
pub const SCHEMA: &str = "
    CREATE TABLE jobs (
        id bigint PRIMARY KEY,
        attempts integer NOT NULL DEFAULT 0,
        run_at timestamptz NOT NULL,
        fail_first integer NOT NULL
    );
    CREATE INDEX jobs_run_at ON jobs (run_at);
    CREATE TABLE job_runs (
        job_id bigint NOT NULL,
        attempt integer NOT NULL,
        worker text NOT NULL,
        started_at timestamptz NOT NULL,
        finished_at timestamptz NOT NULL,
        ok boolean NOT NULL,
        next_run_at timestamptz
    );
    CREATE TABLE done_jobs (id bigint PRIMARY KEY, attempts integer NOT NULL);
    CREATE TABLE dead_jobs (id bigint PRIMARY KEY, attempts integer NOT NULL);
";

/// The queue's policy: Sidekiq's schedule counted in `unit`s (a second in
/// production; a millisecond keeps a test short), spread, `attempts` runs
/// in all.
pub fn policy(unit: Duration, attempts: u32) -> Policy<Sidekiq> {
    Policy::from_strategy(Sidekiq::new().unit(unit))
        .jitter(Jitter::Spread)
        .attempts(attempts)
}

/// Connection settings for the server on `127.0.0.1:port` (as the
/// [`PgServer`](crate::PgServer) superuser).
pub fn config(port: u16) -> Config {
    let mut config = Config::new();
    config
        .host("127.0.0.1")
        .port(port)
        .user(crate::SUPERUSER)
        .dbname("postgres");
    config
}

/// Connects, driving the connection on a spawned task.
///
/// # Errors
///
/// When the server cannot be reached.
pub async fn connect(port: u16) -> Result<Client, Error> {
    let (client, connection) = config(port).connect(NoTls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// Creates the tables.
///
/// # Errors
///
/// A database error.
pub async fn create(client: &Client) -> Result<(), Error> {
    client.batch_execute(SCHEMA).await
}

/// Enqueues jobs, `(id, fail_first)`, due now.
///
/// # Errors
///
/// A database error (a duplicate id among them).
pub async fn enqueue(client: &Client, jobs: &[(i64, i32)]) -> Result<(), Error> {
    let ids: Vec<i64> = jobs.iter().map(|j| j.0).collect();
    let fails: Vec<i32> = jobs.iter().map(|j| j.1).collect();
    client
        .execute(
            "INSERT INTO jobs (id, run_at, fail_first)
             SELECT id, clock_timestamp(), fail FROM unnest($1::bigint[], $2::int[]) AS t(id, fail)",
            &[&ids, &fails],
        )
        .await?;
    Ok(())
}

/// What one worker did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerReport {
    /// Runs made (claims).
    pub runs: u64,
    /// Jobs finished here.
    pub done: u64,
    /// Jobs moved to the dead set here.
    pub dead: u64,
}

/// The longest a worker sleeps before looking at the queue again.
const POLL: Duration = Duration::from_millis(20);

/// Runs jobs until the queue is empty: claims the earliest due job, runs it
/// (its first `fail_first` runs fail, after `work` of busy time each), and
/// finishes, reschedules or buries it, all in one transaction.
///
/// # Errors
///
/// A database error.
pub async fn work(
    client: &mut Client,
    policy: &Policy<Sidekiq>,
    worker: &str,
    work: Duration,
) -> Result<WorkerReport, Error> {
    let mut report = WorkerReport::default();
    loop {
        let tx = client.transaction().await?;
        let claimed = tx
            .query_opt(
                "SELECT id, attempts, fail_first, clock_timestamp() FROM jobs
                 WHERE run_at <= clock_timestamp()
                 ORDER BY run_at, id LIMIT 1
                 FOR UPDATE SKIP LOCKED",
                &[],
            )
            .await?;
        let Some(row) = claimed else {
            tx.rollback().await?;
            // Nothing due: done when the queue is empty (jobs other workers
            // hold are still in it), else wait for the next due job.
            let next = client
                .query_one(
                    "SELECT min(run_at) - clock_timestamp() > interval '0',
                            extract(epoch FROM min(run_at) - clock_timestamp())::float8
                     FROM jobs",
                    &[],
                )
                .await?;
            let later: Option<bool> = next.get(0);
            match later {
                None => return Ok(report),
                Some(true) => {
                    let secs: f64 = next.get(1);
                    tokio::time::sleep(Duration::from_secs_f64(secs).min(POLL)).await;
                }
                // Due, but held by another worker.
                Some(false) => tokio::time::sleep(Duration::from_millis(1)).await,
            }
            continue;
        };
        let id: i64 = row.get(0);
        let failed_before: i32 = row.get(1);
        let fail_first: i32 = row.get(2);
        let started: SystemTime = row.get(3);
        let attempt = failed_before + 1;
        report.runs += 1;
        // The job's work.
        tokio::time::sleep(work).await;
        let ok = attempt > fail_first;
        let finished: SystemTime = tx.query_one("SELECT clock_timestamp()", &[]).await?.get(0);
        let next = if ok {
            tx.execute("DELETE FROM jobs WHERE id = $1", &[&id]).await?;
            tx.execute(
                "INSERT INTO done_jobs (id, attempts) VALUES ($1, $2)",
                &[&id, &attempt],
            )
            .await?;
            report.done += 1;
            None
        } else {
            // Retry k follows the k-th failed run.
            match policy.delay_for(attempt as u32, id as u64) {
                Some(delay) => {
                    let next = finished + delay;
                    tx.execute(
                        "UPDATE jobs SET attempts = $2, run_at = $3 WHERE id = $1",
                        &[&id, &attempt, &next],
                    )
                    .await?;
                    Some(next)
                }
                None => {
                    tx.execute("DELETE FROM jobs WHERE id = $1", &[&id]).await?;
                    tx.execute(
                        "INSERT INTO dead_jobs (id, attempts) VALUES ($1, $2)",
                        &[&id, &attempt],
                    )
                    .await?;
                    report.dead += 1;
                    None
                }
            }
        };
        tx.execute(
            "INSERT INTO job_runs (job_id, attempt, worker, started_at, finished_at, ok, next_run_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[&id, &attempt, &worker, &started, &finished, &ok, &next],
        )
        .await?;
        tx.commit().await?;
    }
}

/// One run, as the log keeps it.
#[derive(Debug, Clone)]
pub struct Run {
    /// The job.
    pub job: i64,
    /// Its attempt, from 1.
    pub attempt: i32,
    /// The worker that ran it.
    pub worker: String,
    /// When the run was claimed.
    pub started: SystemTime,
    /// When it ended.
    pub finished: SystemTime,
    /// Whether it succeeded.
    pub ok: bool,
    /// The `run_at` it gave the job, when it rescheduled it.
    pub next: Option<SystemTime>,
}

/// The log of every run, by job and attempt.
///
/// # Errors
///
/// A database error.
pub async fn runs(client: &Client) -> Result<Vec<Run>, Error> {
    let rows = client
        .query(
            "SELECT job_id, attempt, worker, started_at, finished_at, ok, next_run_at
             FROM job_runs ORDER BY job_id, attempt, started_at",
            &[],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Run {
            job: r.get(0),
            attempt: r.get(1),
            worker: r.get(2),
            started: r.get(3),
            finished: r.get(4),
            ok: r.get(5),
            next: r.get(6),
        })
        .collect())
}

/// The finished and the dead jobs: `(id, attempts)` each, by id.
///
/// # Errors
///
/// A database error.
pub async fn outcomes(client: &Client) -> Result<(Vec<(i64, i32)>, Vec<(i64, i32)>), Error> {
    let read = |table: &'static str| async move {
        let rows = client
            .query(
                &format!("SELECT id, attempts FROM {table} ORDER BY id"),
                &[],
            )
            .await?;
        Ok::<_, Error>(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    };
    Ok((read("done_jobs").await?, read("dead_jobs").await?))
}

/// The jobs still queued.
///
/// # Errors
///
/// A database error.
pub async fn queued(client: &Client) -> Result<i64, Error> {
    Ok(client
        .query_one("SELECT count(*) FROM jobs", &[])
        .await?
        .get(0))
}

/// The arguments of a worker process: `--port P --worker NAME --unit-us U
/// --attempts N --work-us W`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerArgs {
    /// The server's port on 127.0.0.1.
    pub port: u16,
    /// The worker's name in the log.
    pub worker: String,
    /// The policy's unit.
    pub unit: Duration,
    /// The policy's attempt limit.
    pub attempts: u32,
    /// Busy time per run.
    pub work: Duration,
}

impl WorkerArgs {
    /// The command-line arguments that [`parse`](WorkerArgs::parse) reads.
    pub fn to_args(&self) -> Vec<String> {
        vec![
            "--port".into(),
            self.port.to_string(),
            "--worker".into(),
            self.worker.clone(),
            "--unit-us".into(),
            self.unit.as_micros().to_string(),
            "--attempts".into(),
            self.attempts.to_string(),
            "--work-us".into(),
            self.work.as_micros().to_string(),
        ]
    }

    /// Reads the arguments [`to_args`](WorkerArgs::to_args) writes.
    ///
    /// # Errors
    ///
    /// A message naming the argument that is missing or wrong.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<WorkerArgs, String> {
        let (mut port, mut worker, mut unit, mut attempts, mut work) =
            (None, None, None, None, None);
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let value = args
                .next()
                .ok_or_else(|| format!("`{arg}` needs a value"))?;
            let number = || {
                value
                    .parse::<u64>()
                    .map_err(|e| format!("`{arg} {value}`: {e}"))
            };
            match arg.as_str() {
                "--port" => port = Some(u16::try_from(number()?).map_err(|e| e.to_string())?),
                "--worker" => worker = Some(value.clone()),
                "--unit-us" => unit = Some(Duration::from_micros(number()?)),
                "--attempts" => {
                    attempts = Some(u32::try_from(number()?).map_err(|e| e.to_string())?)
                }
                "--work-us" => work = Some(Duration::from_micros(number()?)),
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        Ok(WorkerArgs {
            port: port.ok_or("`--port` is missing")?,
            worker: worker.ok_or("`--worker` is missing")?,
            unit: unit.ok_or("`--unit-us` is missing")?,
            attempts: attempts.ok_or("`--attempts` is missing")?,
            work: work.unwrap_or(Duration::ZERO),
        })
    }

    /// Runs the worker these arguments describe until the queue is empty,
    /// on a runtime of its own.
    ///
    /// # Errors
    ///
    /// A database error.
    pub fn run(&self) -> Result<WorkerReport, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime");
        runtime.block_on(async {
            let mut client = connect(self.port).await?;
            let policy = policy(self.unit, self.attempts);
            work(&mut client, &policy, &self.worker, self.work).await
        })
    }
}

/// One wait between two runs of a job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gap {
    /// The job.
    pub job: i64,
    /// The retry that ended the wait (1 = the second run).
    pub retry: u32,
    /// What [`Policy::delay_for`] asked.
    pub delay: Duration,
    /// From the end of the failed run to the start of the next.
    pub waited: Duration,
}

impl Gap {
    /// How much later than asked the retry started.
    pub fn late(&self) -> Duration {
        self.waited.saturating_sub(self.delay)
    }
}

/// What the log says of a finished queue, against what `policy` asks.
#[derive(Debug, Clone, Default)]
pub struct Audit {
    /// Jobs neither finished nor dead.
    pub lost: Vec<i64>,
    /// Jobs both finished and dead.
    pub both: Vec<i64>,
    /// `(job, attempt)` logged more than once.
    pub twice: Vec<(i64, i32)>,
    /// Jobs whose runs are not attempts 1, 2, … without a hole, or whose
    /// count is not the one their payload and the limit give.
    pub wrong_runs: Vec<i64>,
    /// Reschedules whose `run_at` is not the end of the run plus
    /// `delay_for` (to the microsecond the column keeps).
    pub misscheduled: Vec<(i64, i32)>,
    /// Retries that started before their `run_at`.
    pub early: Vec<(i64, i32)>,
    /// Every wait between two runs.
    pub gaps: Vec<Gap>,
    /// Runs per worker.
    pub workers: std::collections::BTreeMap<String, u64>,
    /// Jobs finished.
    pub done: usize,
    /// Jobs in the dead set.
    pub dead: usize,
}

impl Audit {
    /// Whether nothing was lost, run twice, misscheduled or started early.
    pub fn clean(&self) -> bool {
        self.lost.is_empty()
            && self.both.is_empty()
            && self.twice.is_empty()
            && self.wrong_runs.is_empty()
            && self.misscheduled.is_empty()
            && self.early.is_empty()
    }
}

/// Checks the log of a queue that ran `jobs` (`(id, fail_first)`) to the
/// end under `policy`.
pub fn audit(
    jobs: &[(i64, i32)],
    policy: &Policy<Sidekiq>,
    runs: &[Run],
    done: &[(i64, i32)],
    dead: &[(i64, i32)],
) -> Audit {
    use std::collections::BTreeMap;
    let micro = Duration::from_micros(1);
    let mut audit = Audit {
        done: done.len(),
        dead: dead.len(),
        ..Audit::default()
    };
    let done: BTreeMap<i64, i32> = done.iter().copied().collect();
    let dead: BTreeMap<i64, i32> = dead.iter().copied().collect();
    let mut by_job: BTreeMap<i64, Vec<&Run>> = BTreeMap::new();
    for run in runs {
        by_job.entry(run.job).or_default().push(run);
        *audit.workers.entry(run.worker.clone()).or_default() += 1;
    }
    let limit = policy.attempt_limit().unwrap_or(u32::MAX) as i32;
    for &(id, fail_first) in jobs {
        match (done.get(&id), dead.get(&id)) {
            (None, None) => audit.lost.push(id),
            (Some(_), Some(_)) => audit.both.push(id),
            _ => {}
        }
        let job_runs = by_job.remove(&id).unwrap_or_default();
        let mut seen = BTreeMap::new();
        for run in &job_runs {
            *seen.entry(run.attempt).or_insert(0) += 1;
        }
        for (&attempt, &count) in &seen {
            if count > 1 {
                audit.twice.push((id, attempt));
            }
        }
        let expected = (fail_first + 1).min(limit);
        let attempts: Vec<i32> = seen.keys().copied().collect();
        let recorded = done.get(&id).or(dead.get(&id)).copied();
        if attempts != (1..=expected).collect::<Vec<_>>() || recorded != Some(expected) {
            audit.wrong_runs.push(id);
        }
        for pair in job_runs.windows(2) {
            let (failed, next) = (pair[0], pair[1]);
            let Some(run_at) = failed.next else { continue };
            let delay = policy
                .delay_for(failed.attempt as u32, id as u64)
                .unwrap_or(Duration::MAX);
            let asked = run_at.duration_since(failed.finished).unwrap_or_default();
            if asked.abs_diff(delay) > micro {
                audit.misscheduled.push((id, failed.attempt));
            }
            if next.started + micro < run_at {
                audit.early.push((id, next.attempt));
            }
            audit.gaps.push(Gap {
                job: id,
                retry: failed.attempt as u32,
                delay,
                waited: next
                    .started
                    .duration_since(failed.finished)
                    .unwrap_or_default(),
            });
        }
    }
    // Runs of jobs that were never enqueued.
    audit.lost.extend(by_job.keys().map(|id| -id));
    audit
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIT: Duration = Duration::from_millis(10);

    /// The log of a queue that ran as it should: job 1 fails once, job 2
    /// never, job 3 fails every one of its 3 attempts.
    fn good_log(policy: &Policy<Sidekiq>) -> (Vec<(i64, i32)>, Vec<Run>) {
        let jobs = vec![(1, 1), (2, 0), (3, 9)];
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut runs = Vec::new();
        for &(id, fail_first) in &jobs {
            let mut at = t0;
            for attempt in 1..=(fail_first + 1).min(3) {
                let finished = at + Duration::from_millis(1);
                let ok = attempt > fail_first;
                let next = (!ok)
                    .then(|| policy.delay_for(attempt as u32, id as u64))
                    .flatten()
                    .map(|d| finished + d);
                runs.push(Run {
                    job: id,
                    attempt,
                    worker: format!("w{}", attempt % 2),
                    started: at,
                    finished,
                    ok,
                    next,
                });
                at = next.unwrap_or(finished) + Duration::from_millis(2);
            }
        }
        (jobs, runs)
    }

    #[test]
    fn a_good_log_is_clean() {
        let policy = policy(UNIT, 3);
        let (jobs, runs) = good_log(&policy);
        let audit = audit(&jobs, &policy, &runs, &[(1, 2), (2, 1)], &[(3, 3)]);
        assert!(audit.clean(), "{audit:#?}");
        assert_eq!(audit.gaps.len(), 3);
        assert!(
            audit
                .gaps
                .iter()
                .all(|g| g.late() == Duration::from_millis(2))
        );
    }

    #[test]
    fn the_audit_finds_every_fault() {
        let policy = policy(UNIT, 3);
        let (jobs, runs) = good_log(&policy);
        // Lost: job 2 finished nowhere.
        let found = audit(&jobs, &policy, &runs, &[(1, 2)], &[(3, 3)]);
        assert_eq!(found.lost, [2]);
        // Both finished and dead.
        let found = audit(&jobs, &policy, &runs, &[(1, 2), (2, 1), (3, 3)], &[(3, 3)]);
        assert_eq!(found.both, [3]);
        // Run twice.
        let mut twice = runs.clone();
        twice.push(runs[2].clone());
        let found = audit(&jobs, &policy, &twice, &[(1, 2), (2, 1)], &[(3, 3)]);
        assert_eq!(found.twice, [(2, 1)]);
        // Rescheduled with another delay, and so retried early.
        let mut wrong = runs.clone();
        let first = wrong
            .iter_mut()
            .find(|r| r.job == 3 && r.attempt == 1)
            .unwrap();
        first.next = first.next.map(|n| n + Duration::from_millis(5));
        let found = audit(&jobs, &policy, &wrong, &[(1, 2), (2, 1)], &[(3, 3)]);
        assert_eq!(found.misscheduled, [(3, 1)]);
        assert_eq!(found.early, [(3, 2)]);
        // Dead too soon: a hole in the attempts.
        let short: Vec<Run> = runs
            .iter()
            .filter(|r| !(r.job == 3 && r.attempt == 3))
            .cloned()
            .collect();
        let found = audit(&jobs, &policy, &short, &[(1, 2), (2, 1)], &[(3, 2)]);
        assert_eq!(found.wrong_runs, [3]);
    }

    #[test]
    fn worker_arguments_round_trip() {
        let args = WorkerArgs {
            port: 5433,
            worker: "w2".into(),
            unit: UNIT,
            attempts: 6,
            work: Duration::from_micros(1500),
        };
        assert_eq!(WorkerArgs::parse(args.to_args()), Ok(args));
        assert!(WorkerArgs::parse(["--port".to_owned()]).is_err());
        assert!(WorkerArgs::parse(["--bogus".to_owned(), "1".to_owned()]).is_err());
    }
}
