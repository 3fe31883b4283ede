//! One process of a fleet, for `tests/processes.rs`:
//!
//! ```text
//! fleet_child URL NAME fail N   # N failures through the shared breaker NAME
//! fleet_child URL NAME watch    # no calls: answers what the fleet says
//! fleet_child URL NAME budget MAX now   # spends from the shared budget at once
//! fleet_child URL NAME budget MAX go    # spends once told `go`
//! ```
//!
//! A `budget` child shares a bucket of MAX tokens that successes never
//! refill; it prints `1` for each token spent, trying every millisecond
//! until it is killed. With `go`, it first prints `ready` once its budget
//! has joined the fleet, then waits for a line `go`.
//!
//! Each prints `ready` once its store has synced, and answers each line of
//! its standard input: `state` (after three more syncs: `open` or
//! `closed`, the fleet's breaker as this process sees it) or `wait-open`
//! (`open` once it is, `timeout` after 10 s). It exits at the end of its
//! input.

use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use backoff_redis::RedisStore;
use backoff_redis_testing::wait_until;
use backoff_runtime::CircuitBreaker;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, name, role, rest @ ..] = args.as_slice() else {
        eprintln!("usage: fleet_child URL NAME (fail N | watch)");
        std::process::exit(2);
    };
    let store = RedisStore::new(url)
        .expect("a valid url")
        .sync_every(Duration::from_millis(20));
    if role == "budget" {
        spend(&store, name, rest);
    }
    let shared = store.breaker(name, CircuitBreaker::new(5, 1, Duration::from_secs(60)));
    let syncs = |n: u64| {
        let start = store.syncs().0;
        assert!(wait_until(Duration::from_secs(10), || store.syncs().0 >= start + n));
    };
    syncs(1);
    if role == "fail" {
        let n: usize = rest.first().and_then(|n| n.parse().ok()).expect("fail N");
        for _ in 0..n {
            if let Ok(permit) = shared.local().acquire(Instant::now()) {
                permit.failure(Instant::now());
            }
        }
        syncs(3);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")
        .and_then(|()| out.flush())
        .expect("stdout");
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let answer = match line.trim() {
            "state" => {
                syncs(3);
                if shared.fleet_open() {
                    "open"
                } else {
                    "closed"
                }
            }
            "wait-open" => {
                if wait_until(Duration::from_secs(10), || shared.fleet_open()) {
                    "open"
                } else {
                    "timeout"
                }
            }
            other => panic!("unknown request `{other}`"),
        };
        writeln!(out, "{answer}")
            .and_then(|()| out.flush())
            .expect("stdout");
    }
}

/// The `budget` role: spends until killed, printing `1` per token.
fn spend(store: &RedisStore, name: &str, rest: &[String]) -> ! {
    let [max, when] = rest else {
        eprintln!("usage: fleet_child URL NAME budget MAX (now | go)");
        std::process::exit(2);
    };
    let max: u32 = max.parse().expect("budget MAX");
    let budget = store.budget(name, backoff_runtime::RetryBudget::new(max, 0.0));
    let mut out = std::io::stdout().lock();
    if when == "go" {
        assert!(wait_until(Duration::from_secs(10), || budget.joined()));
        writeln!(out, "ready")
            .and_then(|()| out.flush())
            .expect("stdout");
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).expect("stdin");
        assert_eq!(line.trim(), "go");
    }
    loop {
        while budget.local().try_spend() {
            writeln!(out, "1")
                .and_then(|()| out.flush())
                .expect("stdout");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}
