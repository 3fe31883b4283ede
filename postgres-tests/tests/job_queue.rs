//! The durable job queue of `backoff_postgres_tests::queue` on a real
//! server, with three worker processes (the `job_worker` binary): nothing
//! is lost or run twice, the last attempt's failure goes to the dead set,
//! and the waits between runs are the ones `Policy::delay_for` asks.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use backoff_postgres_tests::PgServer;
use backoff_postgres_tests::queue::{self, WorkerArgs};

/// A bound on the whole run, far above what it needs (about a second).
const HANG_GUARD: Duration = Duration::from_secs(120);

fn spawn(args: &WorkerArgs) -> Child {
    Command::new(env!("CARGO_BIN_EXE_job_worker"))
        .args(args.to_args())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start a worker: {e}"))
}

/// Waits for every worker, killing them all past the guard.
fn wait_all(mut children: Vec<Child>) {
    let deadline = Instant::now() + HANG_GUARD;
    while !children.is_empty() {
        let mut running = Vec::new();
        for mut child in children {
            match child.try_wait().expect("a worker's status") {
                Some(status) => assert!(status.success(), "a worker failed: {status}"),
                None => running.push(child),
            }
        }
        children = running;
        if Instant::now() > deadline {
            for child in &mut children {
                let _ = child.kill();
            }
            panic!("the workers did not empty the queue within {HANG_GUARD:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "starts a PostgreSQL server: cargo test -p backoff-postgres-tests -- --include-ignored"]
async fn three_workers_lose_nothing_and_wait_as_delay_for_asks() {
    let server = PgServer::start().unwrap_or_else(|e| panic!("cannot start PostgreSQL: {e}"));
    let client = server.connect().await.expect("a connection");
    queue::create(&client).await.expect("the tables");
    // Job i fails its first i % 7 runs: with 5 attempts, the jobs that fail
    // 5 or 6 times go to the dead set after their 5th run.
    let attempts = 5;
    let jobs: Vec<(i64, i32)> = (1..=60).map(|id| (id, (id % 7) as i32)).collect();
    queue::enqueue(&client, &jobs).await.expect("the jobs");
    // Sidekiq counted in 10 ms: retries 0.3 s to 1.6 s apart, so three
    // workers keep up with the herd and a wait is the schedule's, not a
    // queue's backlog.
    let unit = Duration::from_millis(10);
    let workers: Vec<Child> = ["w1", "w2", "w3"]
        .iter()
        .map(|name| {
            spawn(&WorkerArgs {
                port: server.port(),
                worker: (*name).to_owned(),
                unit,
                attempts,
                work: Duration::from_millis(1),
            })
        })
        .collect();
    tokio::task::spawn_blocking(move || wait_all(workers))
        .await
        .expect("the workers");

    assert_eq!(queue::queued(&client).await.unwrap(), 0);
    let runs = queue::runs(&client).await.unwrap();
    let (done, dead) = queue::outcomes(&client).await.unwrap();
    let policy = queue::policy(unit, attempts);
    let audit = queue::audit(&jobs, &policy, &runs, &done, &dead);
    assert!(audit.clean(), "{audit:#?}");
    let dying = jobs.iter().filter(|j| j.1 + 1 > attempts as i32).count();
    assert_eq!((audit.done, audit.dead), (jobs.len() - dying, dying));
    let expected_runs: i32 = jobs.iter().map(|j| (j.1 + 1).min(attempts as i32)).sum();
    assert_eq!(runs.len(), expected_runs as usize);
    // All three processes took jobs.
    assert_eq!(audit.workers.len(), 3, "{:?}", audit.workers);
    // The waits are delay_for's: never shorter (checked by `early`), and
    // late by no more than a worker's wake-up.
    let mut late: Vec<Duration> = audit.gaps.iter().map(|g| g.late()).collect();
    late.sort();
    let median = late[late.len() / 2];
    let p95 = late[late.len() * 95 / 100];
    assert!(
        median <= Duration::from_millis(20),
        "median lateness {median:?}, p95 {p95:?}"
    );
    assert!(p95 <= Duration::from_millis(150), "p95 lateness {p95:?}");
    // And they follow the spread schedule: each job's waits never shrink.
    for job in &jobs {
        let waits: Vec<Duration> = audit
            .gaps
            .iter()
            .filter(|g| g.job == job.0)
            .map(|g| g.delay)
            .collect();
        assert!(waits.windows(2).all(|w| w[0] <= w[1]), "{waits:?}");
    }
}
