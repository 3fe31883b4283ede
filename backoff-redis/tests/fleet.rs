//! Shared breakers, budgets and throttles (`backoff_redis`) against a real
//! `redis-server` that each test starts on a free port and kills when it
//! ends. Several [`RedisStore`]s in this one test process stand for
//! several processes of a fleet (each store has its own process id, its
//! own connection and its own sync thread); `backoff-redis-testing`'s
//! `tests/processes.rs` spawns real child processes too.
//!
//! `cargo test --workspace` must need nothing but Rust, so these tests are
//! `#[ignore]`d with the command that runs them as the reason:
//!
//! ```text
//! cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored
//! ```
//!
//! The waits below poll the fleet's background sync with a bound of a few
//! seconds against hanging; no test asserts a wall-clock duration, except
//! the floor Redis guarantees between two trials (`PX open_for`), which a
//! slow machine can only widen.

use std::io;
use std::sync::{LazyLock, OnceLock};
use std::time::{Duration, Instant};

use backoff_redis::{RedisStore, SharedBreaker, SharedBudget, SharedThrottle};
use backoff_redis_testing::{RedisServer, wait_until};
use backoff_runtime::{
    AdaptiveThrottle, CircuitBreaker, CircuitOpen, CircuitState, RetryBudget, retry,
};

const REASON: &str =
    "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored";
const LIMIT: Duration = Duration::from_secs(10);
const SYNC: Duration = Duration::from_millis(20);

fn server() -> RedisServer {
    let _ = REASON;
    RedisServer::start().unwrap_or_else(|e| panic!("cannot start redis-server: {e}"))
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

fn breakers(
    stores: &[RedisStore],
    name: &str,
    threshold: u32,
    open_for: Duration,
) -> Vec<SharedBreaker> {
    stores
        .iter()
        .map(|s| s.breaker(name, CircuitBreaker::new(threshold, 1, open_for)))
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

fn fail(b: &CircuitBreaker, n: usize) {
    for _ in 0..n {
        if let Ok(p) = b.acquire(Instant::now()) {
            p.failure(Instant::now());
        }
    }
}

#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn the_fleet_opens_for_every_process_on_failures_from_a_quorum() {
    let server = server();
    let stores = stores(&server, 3);
    let b = breakers(&stores, "quorum", 4, Duration::from_secs(60));
    wait_syncs(&stores, 1);
    // Two processes, two failures each: neither opens on its own (4), the
    // fleet (2 + 2 from 2 processes) does, for the third process too.
    fail(&b[0], 2);
    fail(&b[1], 2);
    assert_eq!(b[0].state(), CircuitState::Closed);
    assert!(
        wait_until(LIMIT, || b.iter().all(|b| b.fleet_open())),
        "the fleet did not open"
    );
    for b in &b {
        assert_eq!(b.state(), CircuitState::Open);
        // Held open by the fleet: the refusal cannot say when its trial runs.
        assert_eq!(
            b.local().acquire(Instant::now()).unwrap_err(),
            CircuitOpen::default()
        );
    }
}

#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_shared_rate_breaker_opens_on_the_fleets_failure_ratio() {
    let server = server();
    let stores = stores(&server, 3);
    // Half of at least 6 calls in 60 s.
    let b: Vec<SharedBreaker> = stores
        .iter()
        .map(|s| {
            s.breaker(
                "rate",
                CircuitBreaker::rate(0.5, 6, Duration::from_secs(60), Duration::from_secs(60)),
            )
        })
        .collect();
    wait_syncs(&stores, 1);
    let clock = backoff_runtime::clock::system;
    // Two processes, one success and two failures each: 3 calls each, too
    // few for either alone; 6 calls with 4 failures across the fleet.
    for b in &b[..2] {
        b.local().acquire_on(clock).unwrap().success();
        b.local().acquire_on(clock).unwrap().failure(Instant::now());
        b.local().acquire_on(clock).unwrap().failure(Instant::now());
        assert_eq!(b.state(), CircuitState::Closed);
    }
    assert!(
        wait_until(LIMIT, || b.iter().all(|b| b.fleet_open())),
        "the fleet did not open"
    );
    assert!(b[2].local().acquire_on(clock).is_err());
}

#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_success_anywhere_ends_the_fleets_run_of_failures() {
    let server = server();
    let stores = stores(&server, 4);
    let b = breakers(&stores, "run", 3, Duration::from_secs(60));
    wait_syncs(&stores, 1);
    // Each step is pushed (a sync of its process) before the next.
    let step = |i: usize, ok: bool| {
        if ok {
            b[i].local().acquire(Instant::now()).unwrap().success();
        } else {
            fail(&b[i], 1);
        }
        wait_syncs(&stores[i..=i], 2);
    };
    // F F S F F: never 3 failures in a row across the fleet (the success
    // of process 0 ends the run that process 1's failure is part of).
    step(0, false);
    step(1, false);
    step(0, true);
    step(2, false);
    step(3, false);
    wait_syncs(&stores, 3);
    assert!(
        b.iter()
            .all(|b| !b.fleet_open() && b.state() == CircuitState::Closed)
    );
    // A third failure in a row now does it.
    step(0, false);
    assert!(wait_until(LIMIT, || b.iter().all(|b| b.fleet_open())));
}

#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn one_failing_process_opens_only_its_own_breaker() {
    let server = server();
    let stores = stores(&server, 3);
    let b = breakers(&stores, "alone", 4, Duration::from_secs(60));
    wait_syncs(&stores, 1);
    fail(&b[0], 50); // a process whose network is broken
    assert_eq!(b[0].state(), CircuitState::Open);
    for b in &b[1..] {
        b.local().acquire(Instant::now()).unwrap().success();
    }
    wait_syncs(&stores, 5);
    assert!(b.iter().all(|b| !b.fleet_open()));
    for b in &b[1..] {
        assert_eq!(b.state(), CircuitState::Closed);
        b.local().acquire(Instant::now()).unwrap().success();
    }
    // A second process with a single failure is not enough either: one
    // process counts for at most ceil(4 / 2) = 2.
    fail(&b[1], 1);
    wait_syncs(&stores, 5);
    assert!(b.iter().all(|b| !b.fleet_open()));
    // With a second failure there, it is (2 + 2 from 2 processes).
    fail(&b[1], 1);
    assert!(
        wait_until(LIMIT, || b[2].fleet_open()),
        "the fleet did not open"
    );
}

#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn one_trial_per_open_for_across_the_fleet() {
    let server = server();
    let stores = stores(&server, 4);
    let open_for = Duration::from_millis(150);
    let b = breakers(&stores, "trials", 2, open_for);
    wait_syncs(&stores, 1);
    let began = Instant::now();
    fail(&b[0], 1);
    fail(&b[1], 1);
    assert!(wait_until(LIMIT, || b.iter().all(|b| b.fleet_open())));
    // Every process keeps calling; each trial fails. Record when each
    // trial was admitted, fleet-wide.
    let mut trials: Vec<Instant> = Vec::new();
    let mut refused = 0u64;
    // At least 8 × open_for, and on a loaded machine on until two trials
    // and a hundred refusals have been seen (the bound below is per
    // elapsed open_for, so running longer never loosens it).
    let until = Instant::now() + open_for * 8;
    let limit = Instant::now() + LIMIT;
    let more = |trials: &Vec<Instant>, refused: u64| trials.len() < 2 || refused <= 100;
    while Instant::now() < until || (more(&trials, refused) && Instant::now() < limit) {
        for b in &b {
            match b.local().acquire(Instant::now()) {
                Ok(permit) => {
                    assert!(permit.is_trial(), "a call ran through the open fleet");
                    trials.push(Instant::now());
                    permit.failure(Instant::now());
                }
                Err(CircuitOpen { .. }) => refused += 1,
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // Redis's `PX` expiry keeps the fleet's claims `open_for` apart, the
    // first `open_for` after the opening (which came after `began`): in
    // however long this took, at most one trial per whole `open_for`. (A
    // busy machine only makes fewer; the trials' own instants are the
    // test's, which may see a claim late, so they are not compared.)
    let periods = (Instant::now() - began).as_millis() / open_for.as_millis();
    assert!(
        trials.len() >= 2,
        "{} trials in {periods} × open_for",
        trials.len()
    );
    assert!(
        trials.len() as u128 <= periods,
        "{} trials in {periods} × open_for",
        trials.len()
    );
    assert!(refused > 100);
    // A successful trial closes the fleet for everyone.
    let permit = loop {
        if let Some(p) = b
            .iter()
            .find_map(|b| b.local().acquire(Instant::now()).ok())
        {
            break p;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    permit.success();
    assert!(
        wait_until(LIMIT, || b
            .iter()
            .all(|b| b.state() == CircuitState::Closed && !b.fleet_open())),
        "the fleet did not close"
    );
}

#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_shared_budget_drains_fleet_wide() {
    let server = server();
    let stores = stores(&server, 3);
    let budgets: Vec<SharedBudget> = stores
        .iter()
        .map(|s| s.budget("drain", RetryBudget::new(30, 0.0)))
        .collect();
    wait_syncs(&stores, 2);
    let mut spent = 0u32;
    // Spend whatever each process holds, sync by sync, until nothing is
    // left anywhere for several syncs.
    let mut idle = 0;
    while idle < 5 {
        let before = spent;
        for b in &budgets {
            while b.local().try_spend() {
                spent += 1;
            }
        }
        idle = if spent == before { idle + 1 } else { 0 };
        wait_syncs(&stores, 1);
    }
    // Three local budgets would have allowed 90.
    assert_eq!(spent, 30);
}

#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_budget_refills_the_fleet_bucket_from_every_process() {
    let server = server();
    let stores = stores(&server, 2);
    let budgets: Vec<SharedBudget> = stores
        .iter()
        .map(|s| s.budget("refill", RetryBudget::new(10, 1.0)))
        .collect();
    wait_syncs(&stores, 2);
    let mut spent = 0;
    for _ in 0..5 {
        for b in &budgets {
            while b.local().try_spend() {
                spent += 1;
            }
        }
        wait_syncs(&stores, 1);
    }
    assert_eq!(spent, 10);
    // Four successes in one process earn four retries somewhere.
    for _ in 0..4 {
        budgets[0].local().deposit();
    }
    let mut more = 0;
    for _ in 0..5 {
        wait_syncs(&stores, 1);
        for b in &budgets {
            while b.local().try_spend() {
                more += 1;
            }
        }
    }
    assert_eq!(more, 4);
}

#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn a_shared_throttle_judges_by_the_whole_fleet() {
    let server = server();
    let stores = stores(&server, 3);
    let throttles: Vec<SharedThrottle> = stores
        .iter()
        .map(|s| {
            s.throttle(
                "overload",
                AdaptiveThrottle::new(2.0, Duration::from_secs(60)),
            )
        })
        .collect();
    let now = Instant::now();
    // Two processes see 100 requests rejected by the backend each; the
    // third has sent nothing.
    for t in &throttles[..2] {
        for _ in 0..100 {
            if let Ok(permit) = t.local().try_acquire_with(now, || 0.999_999) {
                permit.rejected();
            }
        }
    }
    assert_eq!(throttles[2].local().reject_probability(now), 0.0);
    // Once synced, the third rejects with the fleet's probability,
    // 200 / 201.
    assert!(wait_until(LIMIT, || throttles[2].local().counts(now) == (200, 0)));
    let p = throttles[2].local().reject_probability(now);
    assert!((p - 200.0 / 201.0).abs() < 1e-9, "{p}");
    assert!(throttles[2].local().try_acquire_with(now, || 0.5).is_err());
    // With the server gone, each counts only its own again.
    drop(server);
    assert!(wait_until(LIMIT, || throttles[2].local().counts(now) == (1, 0)));
}

/// The URL of the server behind the statics below. The attribute takes a
/// `static`, which is never dropped, so the server is not one: the test
/// that uses the statics starts it, owns it (dropping it stops it, on a
/// failure too) and leaves its URL here first.
static STORE_URL: OnceLock<String> = OnceLock::new();
static STORE: LazyLock<RedisStore> = LazyLock::new(|| {
    let url = STORE_URL.get().expect("the test set its server's url");
    RedisStore::new(url).expect("a valid url").sync_every(SYNC)
});
static STATIC_BREAKER: LazyLock<SharedBreaker> = LazyLock::new(|| {
    STORE.breaker(
        "attribute",
        CircuitBreaker::new(3, 1, Duration::from_secs(60)),
    )
});
static STATIC_BUDGET: LazyLock<SharedBudget> =
    LazyLock::new(|| STORE.budget("attribute", RetryBudget::new(2, 0.0)));

#[retry(immediate, attempts = 3, circuit = STATIC_BREAKER, budget = STATIC_BUDGET)]
fn through_statics(fail: bool, calls: &mut u32) -> Result<u32, io::Error> {
    *calls += 1;
    if fail {
        Err(io::Error::other("down"))
    } else {
        Ok(7)
    }
}

static STATIC_THROTTLE: LazyLock<SharedThrottle> = LazyLock::new(|| {
    STORE.throttle(
        "attribute",
        AdaptiveThrottle::new(1.0, Duration::from_secs(60)),
    )
});

#[retry(immediate, attempts = 1, throttle = STATIC_THROTTLE)]
fn through_a_static_throttle(accepted: bool) -> Result<u32, io::Error> {
    if accepted {
        Ok(3)
    } else {
        Err(io::Error::other("overloaded"))
    }
}

#[retry(immediate, attempts = 1, throttle = throttle)]
fn through_a_throttle_reference(throttle: &SharedThrottle) -> Result<u32, io::Error> {
    let _ = throttle;
    Ok(4)
}

struct Client {
    breaker: SharedBreaker,
}

impl Client {
    #[retry(attempts = 1, circuit = self.breaker)]
    fn get(&self, ok: bool) -> Result<u32, io::Error> {
        if ok {
            Ok(1)
        } else {
            Err(io::Error::other("down"))
        }
    }
}

#[retry(attempts = 1, circuit = breaker)]
async fn through_a_reference(breaker: &SharedBreaker, ok: bool) -> Result<u32, io::Error> {
    if ok {
        Ok(2)
    } else {
        Err(io::Error::other("down"))
    }
}

#[tokio::test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
async fn the_attribute_takes_shared_values_as_statics_fields_and_references() {
    let server = server();
    STORE_URL.set(server.url()).expect("one test sets it");
    let mut calls = 0;
    assert_eq!(through_statics(false, &mut calls).unwrap(), 7);
    // Two retries from the budget of 2 (once it has joined its fleet:
    // before, it holds its startup allowance, 1), then the breaker's third
    // failure opens it: one more call is refused without running.
    assert!(wait_until(Duration::from_secs(10), || STATIC_BUDGET.joined()));
    calls = 0;
    assert!(through_statics(true, &mut calls).is_err());
    assert_eq!(calls, 3);
    calls = 0;
    let e = through_statics(true, &mut calls).unwrap_err();
    assert_eq!(calls, 0);
    assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);

    let store = RedisStore::new(&server.url()).unwrap().sync_every(SYNC);
    let client = Client {
        breaker: store.breaker("field", CircuitBreaker::new(1, 1, Duration::from_secs(60))),
    };
    assert_eq!(client.get(true).unwrap(), 1);
    assert!(client.get(false).is_err());
    assert_eq!(
        client.get(true).unwrap_err().kind(),
        io::ErrorKind::ConnectionRefused
    );

    let shared = store.breaker(
        "reference",
        CircuitBreaker::new(1, 1, Duration::from_secs(60)),
    );
    assert_eq!(through_a_reference(&shared, true).await.unwrap(), 2);

    // `throttle`: each attempt asks the shared throttle's local one.
    assert_eq!(through_a_static_throttle(true).unwrap(), 3);
    assert_eq!(STATIC_THROTTLE.local().counts(Instant::now()).0, 1);
    let throttle = store.throttle(
        "reference",
        AdaptiveThrottle::new(2.0, Duration::from_secs(60)),
    );
    assert_eq!(through_a_throttle_reference(&throttle).unwrap(), 4);
    assert_eq!(throttle.local().counts(Instant::now()), (1, 1));
}

#[retry(immediate, attempts = 2, circuit = breaker, budget = budget)]
fn call(breaker: &SharedBreaker, budget: &SharedBudget, ok: bool) -> Result<bool, io::Error> {
    if ok {
        Ok(true)
    } else {
        Err(io::Error::other("its own error"))
    }
}

#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn with_the_server_killed_calls_go_on_locally_and_the_store_reconnects() {
    let mut server = server();
    let stores = stores(&server, 3);
    let b = breakers(&stores, "killed", 1000, Duration::from_millis(100));
    let budgets: Vec<SharedBudget> = stores
        .iter()
        .map(|s| s.budget("killed", RetryBudget::new(1000, 1.0)))
        .collect();
    wait_syncs(&stores, 2);
    let run = |n: usize| {
        for i in 0..n {
            for (b, t) in b.iter().zip(&budgets) {
                let ok = !i.is_multiple_of(4);
                match call(b, t, ok) {
                    Ok(v) => assert!(ok && v),
                    Err(e) => {
                        assert!(!ok);
                        assert_eq!(e.to_string(), "its own error");
                    }
                }
            }
        }
    };
    run(200);
    server.kill();
    // Each store notices (a failed sync) and every call still gets its own
    // outcome, from local state.
    assert!(wait_until(LIMIT, || {
        run(20);
        stores.iter().all(|s| s.syncs().1 > 0)
    }));
    run(2000);
    let failed: Vec<u64> = stores.iter().map(|s| s.syncs().1).collect();
    server.restart().expect("redis-server restarts");
    wait_syncs(&stores, 2);
    run(200);
    // Reconnected: the fleet works again (its keys were lost with the
    // server: the breaker state starts afresh).
    let fresh = breakers(&stores, "after", 2, Duration::from_secs(60));
    wait_syncs(&stores, 1);
    fail(&fresh[0], 1);
    fail(&fresh[1], 1);
    assert!(
        wait_until(LIMIT, || fresh[2].fleet_open()),
        "no fleet after the restart"
    );
    assert!(failed.iter().all(|&f| f > 0));
}

/// The runtime's loops take shared values as the attribute does (through
/// `backoff_runtime::control`): a `Retrying` call behind the third
/// process's breaker is refused, without running its operation, once two
/// other processes have opened the fleet; and its retries spend the
/// fleet's budget.
#[test]
#[ignore = "needs redis-server: cargo test -p backoff-redis -p backoff-redis-testing -- --include-ignored"]
fn the_runtimes_loops_take_shared_values() {
    let server = server();
    let stores = stores(&server, 3);
    // A threshold no process reaches alone (each counts at most 50 toward
    // the fleet's 100).
    let b = breakers(&stores, "loops", 100, Duration::from_secs(60));
    let budget = stores[2].budget("loops", RetryBudget::new(2, 0.0));
    wait_syncs(&stores, 2);
    let policy = backoff_runtime::Policy::immediate().attempts(10);
    let mut calls = 0;
    let result: Result<(), io::Error> = policy
        .retrying(|| {
            calls += 1;
            Err(io::Error::other("down"))
        })
        .budget(&budget)
        .circuit(&b[2])
        .call();
    assert_eq!(result.unwrap_err().to_string(), "down");
    assert_eq!(calls, 3, "the fleet's bucket of 2 tokens: 2 retries");
    assert_eq!(b[2].state(), CircuitState::Closed, "3 of 100 failures here");
    fail(&b[0], 50);
    fail(&b[1], 50);
    assert!(
        wait_until(LIMIT, || b[2].fleet_open()),
        "the fleet did not open"
    );
    let mut ran = false;
    let refused: Result<(), io::Error> = policy
        .retrying(|| {
            ran = true;
            Ok(())
        })
        .circuit(&b[2])
        .call();
    assert_eq!(
        refused.unwrap_err().kind(),
        io::Error::from(CircuitOpen::default()).kind()
    );
    assert!(!ran, "an open fleet refuses before the operation runs");
}
