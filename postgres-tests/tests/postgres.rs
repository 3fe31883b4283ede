//! `#[retry]` against a real PostgreSQL server: each test starts a server of
//! its own ([`PgServer`]), which is stopped when the test ends, passed or
//! failed. Without PostgreSQL installed, every test fails and says which
//! package to install.
//!
//! `cargo test --workspace` includes every member of the workspace, this
//! package too, and must need nothing but Rust: so these tests are marked
//! `#[ignore]`, with the command that runs them as the reason, which
//! `cargo test` prints beside each one:
//!
//! ```text
//! cargo test -p backoff-postgres-tests -- --include-ignored
//! ```

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_postgres_tests::herd::{self, Strategy, Writer};
use backoff_postgres_tests::{PgServer, is_conflict, is_lock_timeout};
use backoff_runtime::retry;
use tokio::sync::{Barrier, Notify, oneshot};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Error, IsolationLevel, Transaction};

/// Fails the test, saying why, when no server can be started.
fn server() -> PgServer {
    PgServer::start().unwrap_or_else(|e| panic!("cannot start PostgreSQL: {e}"))
}

/// Connects, or fails the test.
async fn connect(server: &PgServer) -> Client {
    server
        .connect()
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the test server: {e}"))
}

/// A bound on a test that waits on the database, so that a broken retry
/// loop fails the test instead of hanging it. Far above what any test needs.
const HANG_GUARD: Duration = Duration::from_secs(120);

const WRITERS: usize = 50;

/// 50 writers start together, each adding one to the same counter row in a
/// `SERIALIZABLE` transaction that `#[retry(.., when = is_conflict)]` runs
/// again on a serialization failure. No update may be lost: the counter ends
/// at exactly 50, and the writers wrote each of 1..=50 once.
async fn no_lost_update(strategy: Strategy) {
    let server = server();
    let admin = connect(&server).await;
    herd::reset_counter(&admin).await.unwrap();

    let mut writers = Vec::with_capacity(WRITERS);
    for _ in 0..WRITERS {
        writers.push(Writer::new(connect(&server).await));
    }
    let start = Arc::new(Barrier::new(WRITERS));
    let tasks: Vec<_> = writers
        .into_iter()
        .map(|mut writer| {
            let start = Arc::clone(&start);
            tokio::spawn(async move {
                start.wait().await;
                let written = writer.increment(strategy).await;
                (written, writer.attempts)
            })
        })
        .collect();

    let mut written = BTreeSet::new();
    let mut attempts = 0;
    for task in tasks {
        let (value, tries) = tokio::time::timeout(HANG_GUARD, task)
            .await
            .expect("a writer hung")
            .expect("a writer panicked");
        let value = value.unwrap_or_else(|e| panic!("a writer gave up after {tries} tries: {e}"));
        assert!(written.insert(value), "two writers both wrote {value}");
        attempts += tries;
    }
    assert_eq!(herd::counter(&admin).await.unwrap(), WRITERS as i64);
    assert_eq!(written, (1..=WRITERS as i64).collect::<BTreeSet<_>>());
    // 50 writers that start together conflict: some transactions failed
    // and were run again from the start.
    assert!(
        attempts > WRITERS as u32,
        "{attempts} transactions for {WRITERS} writers: nothing was retried"
    );
    eprintln!(
        "{}: {attempts} transactions for {WRITERS} writers",
        strategy.name()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "starts a PostgreSQL server: cargo test -p backoff-postgres-tests -- --include-ignored"]
async fn no_lost_update_immediate() {
    no_lost_update(Strategy::None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "starts a PostgreSQL server: cargo test -p backoff-postgres-tests -- --include-ignored"]
async fn no_lost_update_exponential() {
    no_lost_update(Strategy::Exponential).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "starts a PostgreSQL server: cargo test -p backoff-postgres-tests -- --include-ignored"]
async fn no_lost_update_full_jitter() {
    no_lost_update(Strategy::Full).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "starts a PostgreSQL server: cargo test -p backoff-postgres-tests -- --include-ignored"]
async fn no_lost_update_equal_jitter() {
    no_lost_update(Strategy::Equal).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "starts a PostgreSQL server: cargo test -p backoff-postgres-tests -- --include-ignored"]
async fn no_lost_update_decorrelated() {
    no_lost_update(Strategy::Decorrelated).await;
}

/// Inserts row `id`, counting attempts: only conflicts are retried.
#[retry(immediate, attempts = 5, when = is_conflict)]
async fn insert_classified(client: &Client, id: i32, attempts: &mut u32) -> Result<u64, Error> {
    *attempts += 1;
    client.execute("INSERT INTO item VALUES ($1)", &[&id]).await
}

/// The same without `when`: every error is retried.
#[retry(immediate, attempts = 5)]
async fn insert_unclassified(client: &Client, id: i32, attempts: &mut u32) -> Result<u64, Error> {
    *attempts += 1;
    client.execute("INSERT INTO item VALUES ($1)", &[&id]).await
}

/// `when` classifies by SQLSTATE: a unique violation (`23505`) will not go
/// away by asking again, so it is returned after one attempt, unchanged.
#[tokio::test]
#[ignore = "starts a PostgreSQL server: cargo test -p backoff-postgres-tests -- --include-ignored"]
async fn unique_violation_is_not_retried() {
    let server = server();
    let client = connect(&server).await;
    client
        .batch_execute("CREATE TABLE item (id int PRIMARY KEY); INSERT INTO item VALUES (1);")
        .await
        .unwrap();

    let mut attempts = 0;
    let error = insert_classified(&client, 1, &mut attempts)
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::UNIQUE_VIOLATION));
    assert_eq!(attempts, 1, "a unique violation was retried");

    // Without `when`, the same error is retried until the attempts run out:
    // the classification is what stopped it.
    let mut attempts = 0;
    let error = insert_unclassified(&client, 1, &mut attempts)
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::UNIQUE_VIOLATION));
    assert_eq!(attempts, 5);

    let mut attempts = 0;
    assert_eq!(
        insert_classified(&client, 2, &mut attempts).await.unwrap(),
        1
    );
    assert_eq!(attempts, 1);
}

/// Deadlocks seen by [`is_conflict_counting_deadlocks`].
static DEADLOCKS: AtomicU32 = AtomicU32::new(0);

/// [`is_conflict`], counting the deadlocks it is shown.
fn is_conflict_counting_deadlocks(e: &Error) -> bool {
    if e.code() == Some(&SqlState::T_R_DEADLOCK_DETECTED) {
        DEADLOCKS.fetch_add(1, Ordering::Relaxed);
    }
    is_conflict(e)
}

/// Moves `amount` from account `from` to account `to`. On its first
/// attempt it waits at `barrier` after locking `from`, so that two opposite
/// transfers each hold the lock the other needs.
#[retry(constant("10ms"), attempts = 5, when = is_conflict_counting_deadlocks)]
async fn transfer(
    client: &mut Client,
    from: i32,
    to: i32,
    barrier: &Barrier,
    attempts: &mut u32,
) -> Result<(), Error> {
    *attempts += 1;
    let tx = client.transaction().await?;
    let debit = "UPDATE account SET balance = balance - $2 WHERE id = $1";
    let credit = "UPDATE account SET balance = balance + $2 WHERE id = $1";
    tx.execute(debit, &[&from, &10_i64]).await?;
    if *attempts == 1 {
        barrier.wait().await;
    }
    tx.execute(credit, &[&to, &10_i64]).await?;
    tx.commit().await
}

/// Two transfers in opposite directions deadlock; PostgreSQL aborts one
/// with `40P01`, `when` classifies it as a conflict, and its retry (a
/// `&mut Client` argument, reborrowed by each attempt) succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "starts a PostgreSQL server: cargo test -p backoff-postgres-tests -- --include-ignored"]
async fn deadlock_is_retried() {
    let server = server();
    let admin = connect(&server).await;
    admin
        .batch_execute(
            "CREATE TABLE account (id int PRIMARY KEY, balance bigint NOT NULL);
             INSERT INTO account VALUES (1, 100), (2, 100);",
        )
        .await
        .unwrap();
    let barrier = Arc::new(Barrier::new(2));
    let mut tasks = Vec::new();
    for (from, to) in [(1, 2), (2, 1)] {
        let mut client = connect(&server).await;
        // Detect the deadlock quickly rather than after the default second.
        client
            .batch_execute("SET deadlock_timeout = '20ms'")
            .await
            .unwrap();
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            let mut attempts = 0;
            let result = transfer(&mut client, from, to, &barrier, &mut attempts).await;
            (result, attempts)
        }));
    }
    let mut attempts = 0;
    for task in tasks {
        let (result, tries) = tokio::time::timeout(HANG_GUARD, task)
            .await
            .expect("a transfer hung")
            .expect("a transfer panicked");
        result.unwrap_or_else(|e| panic!("a transfer failed after {tries} tries: {e}"));
        attempts += tries;
    }
    assert_eq!(DEADLOCKS.load(Ordering::Relaxed), 1);
    assert_eq!(attempts, 3, "one of the two transfers ran twice");
    let balances: Vec<i64> = admin
        .query("SELECT balance FROM account ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(balances, [100, 100], "each transfer applied exactly once");
}

/// Updates row 1 of `counter`, waiting at most `lock_timeout` (50 ms, set
/// on the session) for its lock each time, every 100 ms, for at most a
/// second. (Without jitter: a jittered sleep may be shorter than 100 ms, and
/// the test's bound on the attempts counts whole sleeps.)
#[retry(constant("100ms"), jitter = "none", attempts = unlimited, max_elapsed = "1s", when = is_lock_timeout)]
async fn bump_within_a_second(client: &Client, attempts: &mut u32) -> Result<u64, Error> {
    *attempts += 1;
    client
        .execute("UPDATE counter SET n = n + 1 WHERE id = 1", &[])
        .await
}

/// A row locked by another transaction that never lets go: with
/// `attempts = unlimited`, `max_elapsed = "1s"` is what ends the call, with
/// the last lock timeout (`55P03`), unchanged.
#[tokio::test]
#[ignore = "starts a PostgreSQL server: cargo test -p backoff-postgres-tests -- --include-ignored"]
async fn max_elapsed_bounds_a_lock_wait() {
    let server = server();
    let mut holder = connect(&server).await;
    herd::reset_counter(&holder).await.unwrap();
    let lock = holder.transaction().await.unwrap();
    lock.execute("SELECT n FROM counter WHERE id = 1 FOR UPDATE", &[])
        .await
        .unwrap();

    let client = connect(&server).await;
    client
        .batch_execute("SET lock_timeout = '50ms'")
        .await
        .unwrap();
    let mut attempts = 0;
    let error = tokio::time::timeout(HANG_GUARD, bump_within_a_second(&client, &mut attempts))
        .await
        .expect("max_elapsed did not end the call")
        .unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::LOCK_NOT_AVAILABLE));
    // It did retry; and no sleep may end past one second, so there are at
    // most ten 100 ms sleeps, whatever the timing.
    assert!(
        (2..=11).contains(&attempts),
        "{attempts} attempts within max_elapsed = 1s"
    );
    lock.rollback().await.unwrap();
    assert_eq!(herd::counter(&client).await.unwrap(), 0);
}

/// One attempt inside a savepoint of the caller's transaction (a
/// `&mut Transaction` argument): a failed attempt rolls back to the
/// savepoint, and the transaction goes on. `release` is notified when the
/// second attempt has failed.
#[retry(constant("20ms"), attempts = 20, when = is_lock_timeout,
        on_retry = |_, ev| if ev.attempt == 2 { release.notify_one() })]
async fn bump_in_savepoint(
    tx: &mut Transaction<'_>,
    release: &Notify,
    attempts: &mut u32,
) -> Result<i64, Error> {
    *attempts += 1;
    let savepoint = tx.savepoint("attempt").await?;
    let n = savepoint
        .query_one("UPDATE counter SET n = n + 1 WHERE id = 1 RETURNING n", &[])
        .await?
        .get(0);
    savepoint.commit().await?;
    Ok(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "starts a PostgreSQL server: cargo test -p backoff-postgres-tests -- --include-ignored"]
async fn transaction_argument_retries_in_a_savepoint() {
    let server = server();
    let mut holder = connect(&server).await;
    herd::reset_counter(&holder).await.unwrap();
    holder
        .batch_execute("CREATE TABLE note (text text NOT NULL)")
        .await
        .unwrap();
    // Another connection locks the row until `release` is notified.
    let release = Arc::new(Notify::new());
    let (locked, is_locked) = oneshot::channel();
    let releaser = tokio::spawn({
        let release = Arc::clone(&release);
        async move {
            let lock = holder.transaction().await?;
            lock.execute("SELECT n FROM counter WHERE id = 1 FOR UPDATE", &[])
                .await?;
            let _ = locked.send(());
            release.notified().await;
            lock.rollback().await
        }
    });
    is_locked.await.expect("the row could not be locked");

    let mut client = connect(&server).await;
    client
        .batch_execute("SET lock_timeout = '50ms'")
        .await
        .unwrap();
    let mut tx = client.transaction().await.unwrap();
    tx.execute("INSERT INTO note VALUES ('before the retries')", &[])
        .await
        .unwrap();
    let mut attempts = 0;
    let n = tokio::time::timeout(
        HANG_GUARD,
        bump_in_savepoint(&mut tx, &release, &mut attempts),
    )
    .await
    .expect("the savepoint retries hung")
    .unwrap();
    tx.commit().await.unwrap();
    releaser.await.unwrap().unwrap();

    assert!(
        attempts >= 3,
        "the lock was held for two attempts: {attempts}"
    );
    assert_eq!(n, 1, "the failed attempts left no increment behind");
    assert_eq!(herd::counter(&client).await.unwrap(), 1);
    let notes = client
        .query("SELECT text FROM note", &[])
        .await
        .unwrap()
        .len();
    assert_eq!(notes, 1, "the failed attempts did not undo the transaction");
}

/// The README's tour, as written there: a `&mut self` method whose
/// transaction borrows `self.client` mutably on every attempt.
struct Account {
    client: Client,
    id: i32,
}

impl Account {
    #[retry(exponential(base = "10ms", max = "1s"), attempts = 10, when = is_conflict)]
    async fn deposit(&mut self, amount: i64) -> Result<i64, tokio_postgres::Error> {
        let tx = self
            .client
            .build_transaction()
            .isolation_level(IsolationLevel::Serializable)
            .start()
            .await?;
        let row = tx
            .query_one("SELECT balance FROM account WHERE id = $1", &[&self.id])
            .await?;
        let balance: i64 = row.get(0);
        tx.execute(
            "UPDATE account SET balance = $2 WHERE id = $1",
            &[&self.id, &(balance + amount)],
        )
        .await?;
        tx.commit().await?;
        Ok(balance + amount)
    }
}

/// Five concurrent deposits into one account all land. Each deposit can
/// lose at most once to each of the four others, so 10 attempts are plenty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "starts a PostgreSQL server: cargo test -p backoff-postgres-tests -- --include-ignored"]
async fn readme_tour_concurrent_deposits_all_land() {
    let server = server();
    let admin = connect(&server).await;
    admin
        .batch_execute(
            "CREATE TABLE account (id int PRIMARY KEY, balance bigint NOT NULL);
             INSERT INTO account VALUES (7, 0);",
        )
        .await
        .unwrap();
    let start = Arc::new(Barrier::new(5));
    let mut tasks = Vec::new();
    for _ in 0..5 {
        let mut account = Account {
            client: connect(&server).await,
            id: 7,
        };
        let start = Arc::clone(&start);
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            account.deposit(10).await
        }));
    }
    let mut balances = BTreeSet::new();
    for task in tasks {
        let balance = tokio::time::timeout(HANG_GUARD, task)
            .await
            .expect("a deposit hung")
            .expect("a deposit panicked")
            .expect("a deposit failed");
        balances.insert(balance);
    }
    assert_eq!(balances, BTreeSet::from([10, 20, 30, 40, 50]));
}
