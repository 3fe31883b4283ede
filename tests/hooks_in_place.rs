//! Hooks are evaluated where they are called, as in a loop written by hand
//! (SPEC, "One driver"): `when`, `when_ok`, `on_retry` and `on_giveup`
//! closures may use the function's `&mut` arguments and `self` (also
//! `&mut self`), which the body uses too, and `on_giveup` may move a
//! by-value argument that the body does not move.
//!
//! Each of the five programs of issue #24 that did not compile while each
//! hook was bound as a closure before the loop (E0524, E0501, E0500, E0524,
//! E0382), with its behaviour asserted, and the same shapes through the
//! other paths that give up (a breaker's refusal, `timeout`).

use std::time::Duration;

use backoff_runtime::{
    CircuitBreaker, CircuitOpen, Elapsed, GiveUp, GiveUpReason, RetryEvent, retry,
};
use backoff_workspace_tests::block_on_paused;

fn no_sleep(_: Duration) {}

// 1. `on_retry = |_, _| self.retries += 1` in a `&mut self` method (was E0524).

struct Client {
    calls: u32,
    retries: u32,
}

impl Client {
    #[retry(immediate, attempts = 4, on_retry = |_, _| self.retries += 1, sleep = no_sleep)]
    fn fetch(&mut self) -> Result<u32, String> {
        self.calls += 1;
        if self.calls < 3 {
            Err(format!("call {}", self.calls))
        } else {
            Ok(self.calls)
        }
    }
}

#[test]
fn on_retry_counts_into_mut_self() {
    let mut client = Client {
        calls: 0,
        retries: 0,
    };
    assert_eq!(client.fetch(), Ok(3));
    assert_eq!((client.calls, client.retries), (3, 2));
}

// 2. `on_retry = |e, ev| log(req_id, e, ev)` with `req_id: &mut String`
//    (was E0501).

fn log(req_id: &mut String, e: &String, ev: &RetryEvent) {
    req_id.push_str(&format!(" [{e} #{}]", ev.attempt));
}

#[retry(immediate, attempts = 3, on_retry = |e, ev| log(req_id, e, ev), sleep = no_sleep)]
fn request(req_id: &mut String, fail: &mut u32) -> Result<usize, String> {
    req_id.push('.');
    if *fail > 0 {
        *fail -= 1;
        return Err(format!("e{fail}"));
    }
    Ok(req_id.len())
}

#[test]
fn on_retry_logs_into_a_mut_argument_the_body_uses() {
    let mut id = String::from("req-7");
    let mut fail = 2;
    let len = request(&mut id, &mut fail).expect("third attempt succeeds");
    assert_eq!(id, "req-7. [e1 #1]. [e0 #2].");
    assert_eq!(len, id.len());
}

// 3. `when = |e| self.should_retry(e)` in an async `&mut self` method
//    (was E0500).

struct Fetcher {
    attempts: u32,
    retryable: u32,
}

impl Fetcher {
    fn should_retry(&self, e: &u32) -> bool {
        *e < self.retryable
    }

    #[retry(immediate, attempts = 5, when = |e| self.should_retry(e))]
    async fn fetch(&mut self) -> Result<(), u32> {
        self.attempts += 1;
        tokio::task::yield_now().await;
        Err(self.attempts)
    }
}

#[test]
fn when_asks_mut_self_in_an_async_method() {
    let mut fetcher = Fetcher {
        attempts: 0,
        retryable: 3,
    };
    // Errors 1 and 2 are retried; 3 is not.
    assert_eq!(block_on_paused(fetcher.fetch()), Err(3));
    assert_eq!(fetcher.attempts, 3);
}

// 4. An `on_giveup` counting into a `&mut Stats` that the body also updates
//    (was E0524, and a false "unused variable" warning on `stats`).

#[derive(Debug, Default, PartialEq)]
struct Stats {
    attempts: u32,
    give_ups: u32,
    reasons: Vec<GiveUpReason>,
}

#[retry(immediate, attempts = 3, sleep = no_sleep, on_giveup = |_, g| {
    stats.give_ups += 1;
    stats.reasons.push(g.reason);
})]
fn counted(stats: &mut Stats) -> Result<(), &'static str> {
    stats.attempts += 1;
    Err("down")
}

#[test]
fn on_giveup_counts_into_a_mut_argument_the_body_updates() {
    let mut stats = Stats::default();
    assert_eq!(counted(&mut stats), Err("down"));
    assert_eq!(counted(&mut stats), Err("down"));
    assert_eq!(
        stats,
        Stats {
            attempts: 6,
            give_ups: 2,
            reasons: vec![GiveUpReason::Attempts; 2],
        }
    );
}

// 5. An `on_giveup` that moves a by-value argument the body does not move
//    (was E0382).

#[retry(immediate, attempts = 2, sleep = no_sleep, on_giveup = |_, _| dead_letters.push(message))]
fn deliver(message: String, dead_letters: &mut Vec<String>) -> Result<(), usize> {
    Err(message.len())
}

#[test]
fn on_giveup_moves_a_by_value_argument() {
    let mut dead = Vec::new();
    assert_eq!(deliver("hello".to_owned(), &mut dead), Err(5));
    assert_eq!(deliver("bye".to_owned(), &mut dead), Err(3));
    assert_eq!(dead, ["hello", "bye"]);
}

// The same shapes on the other paths that give up.

#[derive(Debug, PartialEq)]
enum ServiceError {
    Down(u32),
    Open,
    TimedOut,
}

impl From<CircuitOpen> for ServiceError {
    fn from(_: CircuitOpen) -> Self {
        ServiceError::Open
    }
}

impl From<Elapsed> for ServiceError {
    fn from(_: Elapsed) -> Self {
        ServiceError::TimedOut
    }
}

struct Guarded {
    breaker: CircuitBreaker,
    calls: u32,
    give_ups: Vec<(GiveUpReason, u32)>,
}

impl Guarded {
    // A refused call gives up before any attempt; a failing one after two.
    #[retry(immediate, attempts = 2, sleep = no_sleep, circuit = self.breaker,
        on_retry = |_, _| self.calls += 100,
        on_giveup = |_, g: &GiveUp| self.give_ups.push((g.reason, g.attempts)))]
    fn call(&mut self) -> Result<(), ServiceError> {
        self.calls += 1;
        Err(ServiceError::Down(self.calls))
    }
}

#[test]
fn on_giveup_uses_mut_self_when_a_breaker_refuses() {
    let mut g = Guarded {
        breaker: CircuitBreaker::new(2, 1, Duration::from_secs(60)),
        calls: 0,
        give_ups: Vec::new(),
    };
    assert_eq!(g.call(), Err(ServiceError::Down(102)));
    // Two failures opened the breaker: the next call is refused.
    assert_eq!(g.call(), Err(ServiceError::Open));
    assert_eq!(g.calls, 102);
    assert_eq!(
        g.give_ups,
        [(GiveUpReason::Attempts, 2), (GiveUpReason::CircuitOpen, 0)]
    );
}

// Under `timeout`, an `on_giveup` moving a by-value argument, on the path
// where the loop gives up and on the path where the timer does.

#[retry(immediate, attempts = 3, timeout = "10s", on_giveup = |_, g| sink.push((message, g.reason)))]
async fn send(
    message: String,
    hang: bool,
    sink: &mut Vec<(String, GiveUpReason)>,
) -> Result<(), ServiceError> {
    if hang {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
    Err(ServiceError::Down(message.len() as u32))
}

#[test]
fn on_giveup_moves_an_argument_under_timeout_on_both_paths() {
    let mut sink = Vec::new();
    block_on_paused(async {
        assert_eq!(
            send("abc".to_owned(), false, &mut sink).await,
            Err(ServiceError::Down(3))
        );
        assert_eq!(
            send("late".to_owned(), true, &mut sink).await,
            Err(ServiceError::TimedOut)
        );
    });
    assert_eq!(
        sink,
        [
            ("abc".to_owned(), GiveUpReason::Attempts),
            ("late".to_owned(), GiveUpReason::Timeout)
        ]
    );
}

// `when_ok` asking `&mut self`, beside an `on_retry` that counts into it.

struct Poller {
    polls: u32,
    seen: Vec<u32>,
}

impl Poller {
    fn ready(&mut self, v: &u32) -> bool {
        self.seen.push(*v);
        *v >= 3
    }

    #[retry(immediate, attempts = 5, sleep = no_sleep, when_ok = |v| !self.ready(v),
        on_retry = |_, ev| self.seen.push(100 + ev.attempt))]
    fn poll(&mut self) -> Result<u32, String> {
        self.polls += 1;
        Ok(self.polls)
    }
}

#[test]
fn when_ok_and_on_retry_use_mut_self() {
    let mut p = Poller {
        polls: 0,
        seen: Vec::new(),
    };
    assert_eq!(p.poll(), Ok(3));
    assert_eq!(p.seen, [1, 101, 2, 102, 3]);
}

// `#[retry]` above `#[tokio::test]`, as the error for the other order says:
// the attribute sees the `async fn` and keeps `#[tokio::test]` on it.

#[retry(immediate, attempts = 2, timeout = "1s")]
#[tokio::test]
async fn retry_above_tokio_test_keeps_the_async_fn() -> Result<(), ServiceError> {
    tokio::task::yield_now().await;
    Ok(())
}
