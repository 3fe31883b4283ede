//! Fault injection (issue #35): the fleet's shared state against a real
//! `redis-server` that stalls (`DEBUG SLEEP`, SIGSTOP), refuses
//! (`maxmemory`, an ACL without `EVALSHA`), loses its data (`FLUSHALL`) or
//! is killed and restarted. Several [`RedisStore`]s in this process stand
//! for the processes of a fleet, as in `tests/fleet.rs`.
//!
//! The assertions are on counts (is the fleet open, how many connections
//! the server accepted), never on measured durations; the waits poll the
//! stores' sync counters with bounds against hanging. Run with
//!
//! ```text
//! cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored
//! ```

use std::time::{Duration, Instant};

use backoff_redis::{RedisStore, SharedBreaker};
use backoff_redis_testing::{RedisServer, wait_until};
use backoff_runtime::{CircuitBreaker, CircuitState};

const LIMIT: Duration = Duration::from_secs(10);
const SYNC: Duration = Duration::from_millis(20);

fn server() -> RedisServer {
    RedisServer::start().unwrap_or_else(|e| panic!("cannot start redis-server: {e}"))
}

/// A connection of the test's own, for the faults.
fn admin(server: &RedisServer) -> redis::Connection {
    redis::Client::open(server.url())
        .and_then(|c| c.get_connection())
        .expect("the test's own connection")
}

fn cmd(con: &mut redis::Connection, args: &[&str]) -> redis::Value {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c.query(con)
        .unwrap_or_else(|e| panic!("{args:?} failed: {e}"))
}

fn stores(server: &RedisServer, n: usize) -> Vec<RedisStore> {
    (0..n)
        .map(|_| {
            RedisStore::new(&server.url())
                .expect("a valid url")
                .sync_every(SYNC)
        })
        .collect()
}

fn count_breakers(
    stores: &[RedisStore],
    name: &str,
    threshold: u32,
    quorum: u32,
) -> Vec<SharedBreaker> {
    stores
        .iter()
        .map(|s| {
            s.breaker(
                name,
                CircuitBreaker::new(threshold, 1, Duration::from_secs(60)),
            )
            .quorum(quorum)
        })
        .collect()
}

/// Waits until every store has synced `n` more times.
fn wait_syncs(stores: &[RedisStore], n: u64) {
    let start: Vec<u64> = stores.iter().map(|s| s.syncs().0).collect();
    assert!(
        wait_until(LIMIT, || stores
            .iter()
            .zip(&start)
            .all(|(s, &k)| s.syncs().0 >= k + n)),
        "the stores did not sync: {:?}",
        stores.iter().map(RedisStore::syncs).collect::<Vec<_>>()
    );
}

/// Waits until `store` has failed `n` more syncs.
fn wait_failed(store: &RedisStore, n: u64) {
    let start = store.syncs().1;
    assert!(
        wait_until(LIMIT, || store.syncs().1 >= start + n),
        "no sync failed: {:?}",
        store.syncs()
    );
}

fn fail(b: &CircuitBreaker, n: usize) {
    for _ in 0..n {
        if let Ok(p) = b.acquire(Instant::now()) {
            p.failure(Instant::now());
        }
    }
}

fn succeed(b: &CircuitBreaker, n: usize) {
    for _ in 0..n {
        if let Ok(p) = b.acquire(Instant::now()) {
            p.success();
        }
    }
}

/// Stalls the server for `secs` from a thread of its own (`DEBUG SLEEP`
/// blocks the connection that sends it); the returned handle ends with it.
fn debug_sleep(server: &RedisServer, secs: &'static str) -> std::thread::JoinHandle<()> {
    let mut con = admin(server);
    let mut probe = admin(server);
    let handle = std::thread::spawn(move || {
        cmd(&mut con, &["DEBUG", "SLEEP", secs]);
    });
    // Until the stall has begun: a PING of the test's own gets no answer
    // within 50 ms (a fixed slack was not enough on a loaded machine).
    probe
        .set_read_timeout(Some(Duration::from_millis(50)))
        .expect("a read timeout");
    let start = Instant::now();
    while redis::cmd("PING").query::<String>(&mut probe).is_ok() {
        assert!(start.elapsed() < LIMIT, "DEBUG SLEEP never began");
        std::thread::sleep(Duration::from_millis(1));
    }
    handle
}

/// Item 1: processes that saw failures, then a success, while Redis was
/// frozen, must not open the fleet when it answers again.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn after_an_outage_a_healthy_dependency_is_not_refused() {
    let server = server();
    let stores = stores(&server, 4);
    let b = count_breakers(&stores, "outage", 4, 2);
    wait_syncs(&stores, 2);
    server.freeze();
    // Each process: failures and then a success, with syncs timing out
    // (and connections made to the frozen server) in between.
    for _ in 0..3 {
        for b in &b {
            fail(b, 1);
        }
        std::thread::sleep(Duration::from_millis(80));
    }
    for b in &b {
        succeed(b, 1);
    }
    std::thread::sleep(Duration::from_millis(200));
    server.resume();
    wait_syncs(&stores, 5);
    for (i, b) in b.iter().enumerate() {
        assert!(
            !b.fleet_open(),
            "process {i}: the fleet opened after the outage"
        );
        assert_eq!(b.state(), CircuitState::Closed, "process {i}");
    }
}

/// Item 2: a push that timed out on the client and ran later (a stalled
/// server) adds nothing twice.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_push_that_runs_late_counts_each_failure_once() {
    let server = server();
    // Syncing every second, the failure's own push is the one sent into
    // the stall (its 250 ms timeout passes; the server runs it later).
    let stores: Vec<RedisStore> = (0..2)
        .map(|_| {
            RedisStore::new(&server.url())
                .expect("a valid url")
                .sync_every(Duration::from_secs(1))
        })
        .collect();
    // Threshold 2, quorum 1: two failures in the fleet open it.
    let b = count_breakers(&stores, "late", 2, 1);
    wait_syncs(&stores, 1);
    let stall = debug_sleep(&server, "0.6");
    fail(&b[0], 1);
    wait_failed(&stores[0], 1);
    stall.join().expect("DEBUG SLEEP");
    wait_syncs(&stores, 2);
    assert!(!b[0].fleet_open(), "one failure was counted twice");
    assert!(!b[1].fleet_open(), "one failure was counted twice");
    // A second real failure does open it.
    fail(&b[0], 1);
    assert!(
        wait_until(LIMIT, || b[1].fleet_open()),
        "two failures did not open the fleet"
    );
}

/// Item 3: a success that ends a run reaches the fleet even when the sync
/// that carried it was refused (`maxmemory`: every write is an OOM error).
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_run_ending_success_survives_a_refused_sync() {
    let server = server();
    let mut admin = admin(&server);
    let stores = stores(&server, 2);
    let b = count_breakers(&stores, "refused", 4, 2);
    wait_syncs(&stores, 1);
    fail(&b[0], 2);
    wait_syncs(&stores, 2);
    cmd(&mut admin, &["CONFIG", "SET", "maxmemory", "1"]);
    succeed(&b[0], 1); // ends process 0's run; its sync is refused
    wait_failed(&stores[0], 2);
    cmd(&mut admin, &["CONFIG", "SET", "maxmemory", "0"]);
    wait_syncs(&stores, 2);
    fail(&b[1], 2);
    wait_syncs(&stores, 3);
    // 0 + 2 consecutive failures in the fleet, not 2 + 2.
    assert!(!b[0].fleet_open(), "the success was lost");
    assert!(!b[1].fleet_open(), "the success was lost");
    fail(&b[0], 2);
    assert!(
        wait_until(LIMIT, || b[1].fleet_open()),
        "2 + 2 failures after the success did not open the fleet"
    );
}

/// Item 4: one broken process and one stray failure elsewhere do not open
/// a rate breaker's fleet (each process's share is capped, as a count
/// breaker's is).
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn one_broken_process_and_a_stray_failure_do_not_open_a_rate_breaker() {
    let server = server();
    let stores = stores(&server, 3);
    let b: Vec<SharedBreaker> = stores
        .iter()
        .map(|s| {
            s.breaker(
                "rate-cap",
                CircuitBreaker::rate(0.5, 20, Duration::from_secs(10), Duration::from_secs(60)),
            )
            .quorum(2)
        })
        .collect();
    wait_syncs(&stores, 1);
    fail(&b[0], 20); // process 0's network is broken (it opens locally)
    succeed(&b[1], 9);
    fail(&b[1], 1); // one stray failure in 10 calls
    wait_syncs(&stores, 4);
    for (i, b) in b.iter().enumerate() {
        assert!(!b.fleet_open(), "process {i}: one process opened the fleet");
    }
    // Process 1 failing for real too does open it.
    fail(&b[1], 10);
    assert!(
        wait_until(LIMIT, || b[2].fleet_open()),
        "two failing processes did not open the fleet"
    );
}

/// Item 7: the fleet never closes without a trial: not on a late success
/// from a call admitted before the opening, not when its keys are lost.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn the_fleet_closes_only_on_a_trial() {
    let server = server();
    let mut admin = admin(&server);
    let stores = stores(&server, 3);
    let b = count_breakers(&stores, "no-trial", 4, 2);
    wait_syncs(&stores, 1);
    let early = b[2].local().acquire(Instant::now()).expect("closed");
    fail(&b[0], 2);
    fail(&b[1], 2);
    assert!(
        wait_until(LIMIT, || b.iter().all(|b| b.fleet_open())),
        "the fleet did not open"
    );
    early.success(); // admitted before the opening: no trial
    wait_syncs(&stores, 2);
    cmd(&mut admin, &["FLUSHALL"]);
    wait_syncs(&stores, 3);
    for (i, b) in b.iter().enumerate() {
        assert_ne!(
            b.state(),
            CircuitState::Closed,
            "process {i} closed with no trial"
        );
        assert!(b.local().acquire(Instant::now()).is_err(), "process {i}");
    }
}

/// Item 7: `sync_every` is clamped to its documented range.
#[test]
fn sync_every_is_clamped() {
    let store = RedisStore::new("redis://127.0.0.1:1/").expect("a valid url");
    let store = store.sync_every(Duration::MAX);
    assert_eq!(store.sync_period(), Duration::from_secs(1));
    let store = store.sync_every(Duration::ZERO);
    assert_eq!(store.sync_period(), Duration::from_millis(1));
}

/// Item 6: a server that accepts connections and refuses the script (an
/// ACL user without `EVALSHA`) is reconnected to on a backoff, not on every
/// local failure.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_server_refusing_the_script_is_not_reconnected_to_on_every_failure() {
    let server = server();
    let mut admin = admin(&server);
    cmd(
        &mut admin,
        &[
            "ACL", "SETUSER", "noeval", "on", ">secret", "~*", "&*", "+@all", "-evalsha", "-eval",
        ],
    );
    let url = format!("redis://noeval:secret@127.0.0.1:{}/", server.port());
    let stores: Vec<RedisStore> = (0..3)
        .map(|_| RedisStore::new(&url).expect("a valid url").sync_every(SYNC))
        .collect();
    let b = count_breakers(&stores, "storm", 1_000_000, 2);
    let connections = |admin: &mut redis::Connection| -> u64 {
        let info: String = redis::cmd("INFO").arg("stats").query(admin).expect("INFO");
        info.lines()
            .find_map(|l| l.strip_prefix("total_connections_received:"))
            .and_then(|n| n.trim().parse().ok())
            .expect("total_connections_received")
    };
    std::thread::sleep(Duration::from_millis(200));
    let before = connections(&mut admin);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1) {
        for b in &b {
            fail(b, 1);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let made = connections(&mut admin) - before;
    // Backing off from 100 ms with full jitter: a handful each (two
    // connections per reconnect, with the pub/sub one), not one per failure.
    eprintln!("{made} connections in 1 s from 3 processes");
    assert!(made <= 60, "{made} connections in 1 s from 3 processes");
}

/// Item 6: URLs that can never work are refused by `RedisStore::new`, and
/// the error does not show the password.
#[test]
fn a_url_that_can_never_work_is_refused() {
    for url in [
        "redis://:hunter2@127.0.0.1:0/",
        "redis://:hunter2@127.0.0.1:6379/99",
        "redis://:hunter2@127.0.0.1:6379/16",
        "redis://:hunter2@127.0.0.1:6379/-1",
    ] {
        let err = RedisStore::new(url).expect_err(url);
        assert!(
            !format!("{err} {err:?}").contains("hunter2"),
            "{url}: {err}"
        );
    }
    for url in ["redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/15"] {
        assert!(RedisStore::new(url).is_ok(), "{url}");
    }
    // Issue 45, R5: each refused, the error naming the part (all four
    // were accepted, and never connected).
    let long_host = format!("redis://{}:6379/", "a".repeat(10_000));
    for (url, part) in [
        ("redis+unix:///nonexistent/redis.sock", "unix socket path"),
        ("redis://:hun%zzter2@127.0.0.1:6379/", "user or password"),
        (" redis://127.0.0.1:6379/", "space"),
        (long_host.as_str(), "host"),
    ] {
        let err = RedisStore::new(url).expect_err(url);
        let message = format!("{err}");
        assert!(message.contains(part), "{part}: {message}");
        assert!(!message.contains("hun%zzter2"), "{message}");
    }
}

/// Issue 45, R3: a Redis 300 ms away (a delaying proxy, 150 ms each way)
/// works with the defaults: its commands wait for their own timeout, not
/// `sync_every`'s (a 100 ms round trip used to give no good sync at all).
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_redis_300_ms_away_works_with_the_defaults() {
    let server = server();
    let port = backoff_redis_testing::delaying_proxy(server.port(), Duration::from_millis(150))
        .expect("the proxy");
    let far = RedisStore::new(&format!("redis://127.0.0.1:{port}/")).expect("a valid url");
    let near = RedisStore::new(&server.url()).expect("a valid url");
    let budgets = [
        far.budget("far", backoff_runtime::RetryBudget::new(30, 0.0)),
        near.budget("far", backoff_runtime::RetryBudget::new(30, 0.0)),
    ];
    assert!(
        wait_until(Duration::from_secs(20), || budgets
            .iter()
            .all(|b| b.joined())),
        "no sync answered: {:?}",
        far.health()
    );
    assert_eq!(far.health().last_error, None);
    let spent = drain(&budgets, 30);
    assert_eq!(spent, 30, "the far process shares the bucket");
}

/// Issue 45, R4: syncs that failures trigger have a floor, one per
/// `sync_every / 10`: a process failing as fast as it can for 1 s, with
/// `sync_every` 100 ms, syncs about 100 times, not once per failure
/// (2,334 syncs a second before).
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn syncs_that_failures_trigger_have_a_floor() {
    let server = server();
    let store = RedisStore::new(&server.url())
        .expect("a valid url")
        .sync_every(Duration::from_millis(100));
    let b = store.breaker(
        "floor",
        CircuitBreaker::new(1_000_000, 1, Duration::from_secs(60)),
    );
    assert!(wait_until(LIMIT, || b.joined()));
    let (before, start) = (store.syncs(), Instant::now());
    let mut failures = 0;
    while start.elapsed() < Duration::from_secs(1) {
        fail(&b, 1);
        failures += 1;
        std::thread::sleep(Duration::from_micros(200));
    }
    let after = store.syncs();
    let syncs = after.0 + after.1 - before.0 - before.1;
    eprintln!("{syncs} syncs for {failures} failures in 1 s");
    assert!(failures > 1000, "{failures} failures");
    // 100 by the floor, 10 by the period, a few for the loop's slack.
    assert!(syncs <= 115, "{syncs} syncs in 1 s");
}

/// Issue 45, R4: the floor holds back no success that ends a run the
/// fleet counts: its push goes at once. Process A (`sync_every` 1 s, so a
/// floor of 100 ms) has pushed a run of 2 failures (threshold 4, quorum
/// 2: a process counts for half of it at most) and succeeds just after
/// that sync; 50 ms later process B fails twice and pushes it. Were A's
/// success held by the floor, the fleet would count 2 + 2 from two
/// processes and open on a run that is over.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_run_ending_success_is_pushed_past_the_floor() {
    let server = server();
    let slow = RedisStore::new(&server.url())
        .expect("a valid url")
        .sync_every(Duration::from_secs(1));
    let stores = [slow, stores(&server, 1).remove(0)];
    let b = count_breakers(&stores, "run end", 4, 2);
    assert!(wait_until(LIMIT, || b.iter().all(SharedBreaker::joined)));
    let synced = stores[0].syncs().0;
    fail(&b[0], 2);
    // Two syncs: the second began after the failures (it carries them),
    // a millisecond or so before it is seen to end.
    assert!(wait_until(LIMIT, || stores[0].syncs().0 >= synced + 2));
    succeed(&b[0], 1); // A's run ends within A's floor
    std::thread::sleep(Duration::from_millis(50));
    wait_syncs(&stores[1..], 1);
    fail(&b[1], 2);
    wait_syncs(&stores[1..], 2);
    assert!(!b[1].fleet_open(), "the fleet opened on A's ended run");
    wait_syncs(&stores, 1);
    assert!(!b[0].fleet_open(), "the fleet opened on A's ended run");
    // The fleet does count B's failures: 2 more of A's open it.
    fail(&b[0], 2);
    assert!(
        wait_until(LIMIT, || b[1].fleet_open()),
        "2 + 2 failures from two processes did not open the fleet"
    );
}

/// Item 6: a refused password, and a server that is not Redis, are
/// readable from the store's health, without the password.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_refused_password_and_a_server_that_is_not_redis_are_readable_from_the_store() {
    let server = server();
    let url = format!("redis://nobody:hunter2@127.0.0.1:{}/", server.port());
    let store = RedisStore::new(&url).expect("a valid url").sync_every(SYNC);
    let _b = count_breakers(std::slice::from_ref(&store), "auth", 4, 2);
    assert!(
        wait_until(LIMIT, || store.health().last_error.is_some()),
        "no error in {:?}",
        store.health()
    );
    let health = store.health();
    assert_eq!(health.last_good_sync, None);
    let shown = format!("{health:?} {store:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    // Not Redis: a listener that answers with HTTP.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("its port").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16) {
            use std::io::Write;
            if let Ok(mut s) = stream {
                let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
            }
        }
    });
    let store = RedisStore::new(&format!("redis://127.0.0.1:{port}/"))
        .expect("a valid url")
        .sync_every(SYNC);
    let _b = count_breakers(std::slice::from_ref(&store), "http", 4, 2);
    assert!(
        wait_until(LIMIT, || store.health().last_error.is_some()),
        "no error in {:?}",
        store.health()
    );
    assert_eq!(store.syncs().0, 0);
    // One server that answers: the health says so.
    let good = RedisStore::new(&server.url())
        .expect("a valid url")
        .sync_every(SYNC);
    let _b = count_breakers(std::slice::from_ref(&good), "ok", 4, 2);
    assert!(wait_until(LIMIT, || good.health().last_good_sync.is_some()));
    assert_eq!(good.health().last_error, None);
}

/// Spends from every budget until each has refused `rounds` times in a
/// row (a sync may hand a process more meanwhile); the spends.
fn drain(budgets: &[backoff_redis::SharedBudget], rounds: u32) -> u64 {
    let mut spent = 0;
    let mut dry = 0;
    while dry < rounds {
        let mut any = false;
        for b in budgets {
            while b.local().try_spend() {
                spent += 1;
                any = true;
            }
        }
        dry = if any { 0 } else { dry + 1 };
        std::thread::sleep(Duration::from_millis(20));
    }
    spent
}

/// Item 5: a process cut off from Redis for 2 s keeps spending its share;
/// the fleet does not hand that share out again meanwhile. A 30-token
/// bucket with no refill gives at most 30 retries.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_cut_off_process_share_is_not_handed_out_twice() {
    let server = server();
    let mut admin = admin(&server);
    cmd(
        &mut admin,
        &["ACL", "SETUSER", "cut", "on", ">pw", "~*", "&*", "+@all"],
    );
    let mut stores = stores(&server, 2);
    stores.push(
        RedisStore::new(&format!("redis://cut:pw@127.0.0.1:{}/", server.port()))
            .expect("a valid url")
            .sync_every(SYNC),
    );
    let budgets: Vec<_> = stores
        .iter()
        .map(|s| s.budget("cut", backoff_runtime::RetryBudget::new(30, 0.0)))
        .collect();
    wait_syncs(&stores, 3);
    // Process 2 is cut off (its user disabled, its connections killed).
    cmd(&mut admin, &["ACL", "SETUSER", "cut", "off"]);
    cmd(&mut admin, &["CLIENT", "KILL", "USER", "cut"]);
    std::thread::sleep(Duration::from_millis(1500));
    let mut spent = drain(&budgets, 10);
    cmd(&mut admin, &["ACL", "SETUSER", "cut", "on"]);
    wait_syncs(&stores, 3);
    spent += drain(&budgets, 10);
    eprintln!("{spent} retries from a 30-token bucket, one process cut off");
    assert!(spent <= 30, "{spent} retries from a 30-token bucket");
}

/// Three processes on a 30-token bucket with no refill, the third reached
/// through a user of its own that the test can switch off.
fn budgets_with_one_to_cut(
    server: &RedisServer,
    admin: &mut redis::Connection,
    name: &str,
) -> (Vec<RedisStore>, Vec<backoff_redis::SharedBudget>) {
    cmd(
        admin,
        &["ACL", "SETUSER", "cut", "on", ">pw", "~*", "&*", "+@all"],
    );
    let mut stores = stores(server, 2);
    stores.push(
        RedisStore::new(&format!("redis://cut:pw@127.0.0.1:{}/", server.port()))
            .expect("a valid url")
            .sync_every(SYNC),
    );
    let budgets = stores
        .iter()
        .map(|s| s.budget(name, backoff_runtime::RetryBudget::new(30, 0.0)))
        .collect::<Vec<backoff_redis::SharedBudget>>();
    // Shares settle over a few syncs (each process gives back what it
    // holds above a fair share): wait until each holds its 10.
    assert!(
        wait_until(LIMIT, || budgets.iter().all(|b| b.local().tokens() == 10.0)),
        "the shares did not settle: {:?}",
        budgets
            .iter()
            .map(|b| b.local().tokens())
            .collect::<Vec<_>>()
    );
    (stores, budgets)
}

/// Item 5: a process cut off for longer than half a lease (5 s here) gives
/// its share up; when it is back, the tokens it had not spent are the
/// fleet's again: nothing is destroyed.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_process_cut_off_past_half_a_lease_destroys_no_tokens() {
    let server = server();
    let mut admin = admin(&server);
    let (stores, budgets) = budgets_with_one_to_cut(&server, &mut admin, "half");
    assert!(
        budgets[2].local().tokens() > 0.0,
        "the third process holds a share"
    );
    cmd(&mut admin, &["ACL", "SETUSER", "cut", "off"]);
    cmd(&mut admin, &["CLIENT", "KILL", "USER", "cut"]);
    // It gives its share up once Redis has been away for half a lease.
    assert!(
        wait_until(Duration::from_secs(12), || budgets[2].local().tokens()
            == 0.0),
        "the cut-off process kept its share"
    );
    cmd(&mut admin, &["ACL", "SETUSER", "cut", "on"]);
    wait_syncs(&stores, 3);
    let spent = drain(&budgets, 10);
    eprintln!("{spent} retries from a 30-token bucket after a long cut-off");
    assert_eq!(spent, 30, "tokens destroyed by a cut-off");
}

/// Item 5: a process cut off for longer than a lease (10 s here) spends
/// part of its share meanwhile; the fleet reclaims the lease. When the
/// process is back, what it spent is charged: the fleet's retries stay
/// within the bucket.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_process_back_after_its_lease_was_reclaimed_pays_for_what_it_spent() {
    let server = server();
    let mut admin = admin(&server);
    let (stores, budgets) = budgets_with_one_to_cut(&server, &mut admin, "back");
    cmd(&mut admin, &["ACL", "SETUSER", "cut", "off"]);
    cmd(&mut admin, &["CLIENT", "KILL", "USER", "cut"]);
    let mut spent = 0;
    for _ in 0..4 {
        assert!(budgets[2].local().try_spend(), "a share of 10 tokens");
        spent += 1;
    }
    // The others reclaim its lease once it has been unheard of for 10 s
    // (a lease: 10 × the report lifetime of 1 s, at least 10 s).
    std::thread::sleep(Duration::from_millis(11_500));
    cmd(&mut admin, &["ACL", "SETUSER", "cut", "on"]);
    wait_syncs(&stores, 3);
    spent += drain(&budgets, 10);
    eprintln!("{spent} retries from a 30-token bucket, one lease reclaimed");
    assert_eq!(spent, 30, "tokens made or destroyed by a reclaimed lease");
}

/// Item 5: a stall (`DEBUG SLEEP`) destroys no tokens: after it, the fleet
/// spends its whole bucket.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_stall_destroys_no_budget_tokens() {
    let server = server();
    let stores = stores(&server, 3);
    let budgets: Vec<_> = stores
        .iter()
        .map(|s| s.budget("stall", backoff_runtime::RetryBudget::new(30, 0.0)))
        .collect();
    wait_syncs(&stores, 3);
    let stall = debug_sleep(&server, "1");
    // Spending during the stall: each sync sent into it runs late.
    let mut spent = 0;
    for _ in 0..3 {
        for b in &budgets {
            spent += u64::from(b.local().try_spend());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    stall.join().expect("DEBUG SLEEP");
    wait_syncs(&stores, 3);
    spent += drain(&budgets, 10);
    eprintln!("{spent} retries from a 30-token bucket after a stall");
    assert_eq!(spent, 30, "tokens lost or made in the stall");
}

/// Item 7 (and 1): the server killed and restarted without its data while
/// the fleet is open: no process closes without a trial, and when the
/// fleet's processes then see only successes the fleet does not reopen.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_restart_without_data_closes_nothing_without_a_trial() {
    let mut server = server();
    let stores = stores(&server, 3);
    let b = count_breakers(&stores, "restart", 4, 2);
    wait_syncs(&stores, 1);
    fail(&b[0], 2);
    fail(&b[1], 2);
    assert!(
        wait_until(LIMIT, || b.iter().all(|b| b.fleet_open())),
        "the fleet did not open"
    );
    server.kill();
    server.restart().expect("restart");
    wait_syncs(&stores, 3);
    for (i, b) in b.iter().enumerate() {
        assert_ne!(
            b.state(),
            CircuitState::Closed,
            "process {i} closed with no trial"
        );
        assert!(!b.fleet_open(), "process {i}: the fleet's keys are gone");
    }
}

/// A restart with its data (`SAVE`, SIGKILL, start again): the fleet is
/// still open for every process, and one trial closes it for all.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_restart_with_data_keeps_the_fleet_open_until_a_trial() {
    let mut server = server();
    let stores = stores(&server, 3);
    let b: Vec<SharedBreaker> = stores
        .iter()
        .map(|s| {
            s.breaker(
                "saved",
                CircuitBreaker::new(4, 1, Duration::from_millis(300)),
            )
        })
        .collect();
    wait_syncs(&stores, 1);
    fail(&b[0], 2);
    fail(&b[1], 2);
    assert!(
        wait_until(LIMIT, || b.iter().all(|b| b.fleet_open())),
        "the fleet did not open"
    );
    cmd(&mut admin(&server), &["SAVE"]);
    server.kill();
    server.restart().expect("restart");
    wait_syncs(&stores, 3);
    for (i, b) in b.iter().enumerate() {
        assert!(b.fleet_open(), "process {i}: the fleet's opening was kept");
        assert!(b.local().acquire(Instant::now()).is_err(), "process {i}");
    }
    // Calls keep coming (refused: the trial is wanted); one is the trial.
    assert!(
        wait_until(LIMIT, || {
            succeed(&b[2], 1);
            b.iter()
                .all(|b| b.state() == CircuitState::Closed && !b.fleet_open())
        }),
        "no trial closed the fleet: {:?}",
        b.iter().map(SharedBreaker::state).collect::<Vec<_>>()
    );
}

/// The race behind a flaky `a_process_cut_off_past_half_a_lease_destroys_no_tokens`
/// (31 of 30): a sync reads the balance, spends go on while its script
/// runs, and the share it brings back is smaller than what was spent
/// meanwhile. The local bucket cannot go below zero, so the difference
/// was forgotten while the fleet had taken the whole balance back: tokens
/// made. Now it is owed, and given back at the next sync. Three processes
/// syncing every millisecond, each spending from a thread of its own as
/// fast as it can, spend at most the bucket (31 in the third of five
/// rounds before).
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn spends_racing_a_sync_make_no_tokens() {
    let server = server();
    for round in 0..8 {
        let stores: Vec<RedisStore> = (0..3)
            .map(|_| {
                RedisStore::new(&server.url())
                    .expect("a valid url")
                    .sync_every(Duration::from_millis(1))
            })
            .collect();
        let name = format!("race{round}");
        let budgets: Vec<_> = stores
            .iter()
            .map(|s| s.budget(&name, backoff_runtime::RetryBudget::new(30, 0.0)))
            .collect();
        assert!(wait_until(LIMIT, || budgets.iter().all(|b| b.joined())));
        let spent: u64 = std::thread::scope(|s| {
            let threads: Vec<_> = budgets
                .iter()
                .map(|b| {
                    s.spawn(move || {
                        let (mut spent, start) = (0, Instant::now());
                        while start.elapsed() < Duration::from_millis(1500) {
                            spent += u64::from(b.local().try_spend());
                            std::hint::spin_loop();
                        }
                        spent
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().expect("a spender"))
                .sum()
        });
        eprintln!("round {round}: {spent} retries from a 30-token bucket");
        assert!(spent <= 30, "round {round}: {spent} retries from 30 tokens");
    }
}

/// Issue 45 (item 3): while Redis is away, the processes' own trials are
/// staggered. Seven processes held open by their fleet (`open_for` 1 s),
/// then Redis killed, each calling a dead dependency every 2 ms for 4.5 s.
/// When a process finds Redis away (no answer for 1 s), the fleet's hold
/// ends and its breaker, open since the fleet opened (over 1 s before),
/// would let its next call through at once: all seven would try together.
/// Each tries instead at a random point of the `open_for` that begins
/// then, and once per `open_for` after: N calls per `open_for` reach the
/// dependency for the fleet, spread over it.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn local_trials_are_staggered_while_redis_is_away() {
    const N: usize = 7;
    let mut server = server();
    let stores = stores(&server, N);
    let b: Vec<SharedBreaker> = stores
        .iter()
        .map(|s| s.breaker("stagger", CircuitBreaker::new(2, 1, Duration::from_secs(1))))
        .collect();
    assert!(wait_until(LIMIT, || b.iter().all(SharedBreaker::joined)));
    fail(&b[0], 1);
    fail(&b[1], 1);
    assert!(
        wait_until(LIMIT, || b.iter().all(|b| b.fleet_open())),
        "the fleet did not open"
    );
    server.kill();
    let start = Instant::now();
    // Per process: when it saw the fleet's hold end, and its trials.
    let seen: Vec<(Option<Duration>, Vec<Duration>)> = std::thread::scope(|s| {
        let callers: Vec<_> = b
            .iter()
            .map(|b| {
                s.spawn(move || {
                    let (mut released, mut trials) = (None, Vec::new());
                    while start.elapsed() < Duration::from_millis(4500) {
                        if released.is_none() && !b.fleet_open() {
                            released = Some(start.elapsed());
                        }
                        if let Ok(permit) = b.local().acquire(Instant::now()) {
                            // (The hold may end between the two reads.)
                            released.get_or_insert(start.elapsed());
                            trials.push(start.elapsed());
                            permit.failure(Instant::now());
                        }
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    (released, trials)
                })
            })
            .collect();
        callers
            .into_iter()
            .map(|c| c.join().expect("a caller"))
            .collect()
    });
    let calls: usize = seen.iter().map(|(_, t)| t.len()).sum();
    // From the end of each process's hold to its first trial.
    let waits: Vec<Duration> = seen
        .iter()
        .map(|(released, trials)| {
            let released = released.expect("the hold ends while Redis is away");
            let first = *trials.first().expect("every process tries on its own");
            first - released
        })
        .collect();
    eprintln!(
        "{N} processes, Redis killed, dependency dead: {calls} calls in 4.5 s; waits {waits:?}"
    );
    // Uniform over 1 s each: all seven below 150 ms has a chance of 2 in a
    // million; without the stagger, each tried within a calling period.
    let longest = *waits.iter().max().expect("N processes");
    assert!(longest >= Duration::from_millis(150), "{waits:?}");
    // One per process per `open_for` (the first after at least 1 s: no
    // sync for 1 s is an absence of Redis).
    assert!(calls <= N * 4, "{calls} calls: {seen:?}");
}
