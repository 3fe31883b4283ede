//! `fallback = F` on `#[retry]` functions: `FnOnce(E, &GiveUp) -> Result<T, E>`,
//! called once when the call gives up with an error; its result is the
//! call's result.
//!
//! - called after the attempts are spent, on `Stop`, on an open breaker,
//!   on a whole-call `timeout`, with the give-up record;
//! - never on `Ok`, nor on an `Ok` that `when_ok` rejected (returned
//!   unchanged);
//! - after `on_giveup`, which sees the outcome the call gave up with;
//! - a closure may move a by-value argument the body does not move, and use
//!   `&mut self`;
//! - sync and async, paths and closures.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use backoff_runtime::{
    CircuitBreaker, CircuitOpen, Decision, Elapsed, GiveUp, GiveUpReason, retry,
};

#[derive(Debug, PartialEq)]
enum Error {
    Busy(u32),
    Missing,
    Open,
    TimedOut,
}

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error::Open
    }
}

impl From<Elapsed> for Error {
    fn from(_: Elapsed) -> Self {
        Error::TimedOut
    }
}

fn cached(e: Error, g: &GiveUp) -> Result<String, Error> {
    Ok(format!(
        "cached after {:?} ({} attempts, {:?})",
        e, g.attempts, g.reason
    ))
}

#[test]
fn a_path_replaces_the_error_once_the_attempts_are_spent() {
    thread_local!(static CALLS: Cell<u32> = const { Cell::new(0) });

    #[retry(immediate, attempts = 3, fallback = cached)]
    fn fetch() -> Result<String, Error> {
        let n = CALLS.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        Err(Error::Busy(n))
    }

    assert_eq!(
        fetch().unwrap(),
        "cached after Busy(3) (3 attempts, Attempts)"
    );
    assert_eq!(CALLS.with(Cell::get), 3);
}

#[test]
fn never_called_on_ok_and_called_on_stop() {
    let called = Cell::new(0);

    #[retry(immediate, attempts = 3, when = |e| if *e == Error::Missing { Decision::Stop } else { Decision::Retry },
            fallback = |e, g| { called.set(called.get() + 1); assert_eq!(g.reason, GiveUpReason::Stopped); Err(e) })]
    fn get(called: &Cell<u32>, fail: bool) -> Result<u32, Error> {
        let _ = called;
        if fail { Err(Error::Missing) } else { Ok(7) }
    }

    assert_eq!(get(&called, false), Ok(7));
    assert_eq!(called.get(), 0, "fallback ran on Ok");
    assert_eq!(get(&called, true), Err(Error::Missing));
    assert_eq!(called.get(), 1);
}

#[test]
fn an_ok_that_when_ok_rejected_is_returned_unchanged() {
    let called = Cell::new(false);

    #[retry(immediate, attempts = 2, when_ok = |v| *v < 0, fallback = |e, _| { called.set(true); Err(e) })]
    fn read(called: &Cell<bool>) -> Result<i32, Error> {
        let _ = called;
        Ok(-1)
    }

    assert_eq!(read(&called), Ok(-1));
    assert!(!called.get(), "fallback ran on a rejected Ok");
}

#[test]
fn on_giveup_sees_the_error_and_fallback_replaces_it() {
    let log = RefCell::new(Vec::new());

    #[retry(immediate, attempts = 2,
            on_giveup = |r, _| log.borrow_mut().push(format!("gave up with {r:?}")),
            fallback = |_, _| { log.borrow_mut().push("fallback".to_owned()); Ok(0) })]
    fn run(log: &RefCell<Vec<String>>) -> Result<u32, Error> {
        log.borrow_mut().push("attempt".to_owned());
        Err(Error::Busy(1))
    }

    assert_eq!(run(&log), Ok(0));
    assert_eq!(
        *log.borrow(),
        [
            "attempt",
            "attempt",
            "gave up with Err(Busy(1))",
            "fallback"
        ]
    );
}

#[test]
fn an_open_breaker_falls_back_without_running_the_body() {
    static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(60));
    thread_local!(static RUNS: Cell<u32> = const { Cell::new(0) });

    #[retry(immediate, attempts = 1, circuit = BREAKER, fallback = |e, g| Ok(format!("{e:?} {:?}", g.reason)))]
    fn call() -> Result<String, Error> {
        RUNS.with(|r| r.set(r.get() + 1));
        Err(Error::Busy(0))
    }

    assert_eq!(call().unwrap(), "Busy(0) Attempts");
    assert_eq!(call().unwrap(), "Open CircuitOpen");
    assert_eq!(RUNS.with(Cell::get), 1);
}

#[test]
fn a_closure_may_move_a_by_value_argument_the_body_does_not_move() {
    #[retry(immediate, attempts = 2, fallback = |_, _| Ok(default))]
    fn lookup(key: &str, default: String) -> Result<String, Error> {
        if key.is_empty() {
            Err(Error::Missing)
        } else {
            Ok(key.to_owned())
        }
    }

    assert_eq!(lookup("", "none".to_owned()).unwrap(), "none");
    assert_eq!(lookup("k", "none".to_owned()).unwrap(), "k");
}

struct Cache {
    last_good: Option<u32>,
    fallbacks: u32,
}

impl Cache {
    #[retry(constant(delay = "100ms"), attempts = 3, jitter = "none", fallback = |e, _| {
        self.fallbacks += 1;
        self.last_good.ok_or(e)
    })]
    async fn price(&mut self, up: bool) -> Result<u32, Error> {
        if up {
            self.last_good = Some(42);
            Ok(42)
        } else {
            Err(Error::Busy(0))
        }
    }

    #[retry(constant(delay = "1s"), attempts = 10, jitter = "none", timeout = "2500ms", fallback = |e, g| {
        assert_eq!((e, g.reason), (Error::TimedOut, GiveUpReason::Timeout));
        Ok(self.last_good.unwrap_or(0))
    })]
    async fn slow(&mut self) -> Result<u32, Error> {
        Err(Error::Busy(1))
    }
}

#[tokio::test(start_paused = true)]
async fn async_methods_with_mut_self_fall_back_after_the_sleeps() {
    let mut cache = Cache {
        last_good: None,
        fallbacks: 0,
    };
    let start = tokio::time::Instant::now();
    assert_eq!(cache.price(false).await, Err(Error::Busy(0)));
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    assert_eq!(cache.price(true).await, Ok(42));
    assert_eq!(cache.price(false).await, Ok(42));
    assert_eq!(cache.fallbacks, 2);

    let start = tokio::time::Instant::now();
    assert_eq!(cache.slow().await, Ok(42));
    assert_eq!(start.elapsed(), Duration::from_millis(2500));
}

// The runtime without the attribute: `retrying(..).fallback(..)`.

#[test]
fn the_builder_falls_back_after_on_giveup_and_on_an_open_breaker() {
    static BREAKER: CircuitBreaker = CircuitBreaker::new(1, 1, Duration::from_secs(60));
    let policy = backoff_runtime::Policy::immediate().attempts(2);
    let log = RefCell::new(Vec::new());
    let call = || {
        policy
            .retrying(|| {
                log.borrow_mut().push("attempt".to_owned());
                Err::<u32, Error>(Error::Busy(1))
            })
            .circuit(&BREAKER)
            .on_giveup(|r, g| log.borrow_mut().push(format!("{r:?} {:?}", g.reason)))
            .fallback(|e, g| {
                log.borrow_mut()
                    .push(format!("fallback {e:?} {:?}", g.reason));
                Ok(0)
            })
            .call()
    };
    assert_eq!(call(), Ok(0));
    assert_eq!(call(), Ok(0));
    assert_eq!(
        *log.borrow(),
        [
            "attempt",
            "Err(Busy(1)) CircuitOpen",
            "fallback Busy(1) CircuitOpen",
            "Err(Open) CircuitOpen",
            "fallback Open CircuitOpen",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_builder_falls_back_on_a_timeout() {
    let policy = backoff_runtime::Policy::constant(Duration::from_secs(1))
        .jitter(backoff_runtime::Jitter::None)
        .unlimited_attempts();
    let start = tokio::time::Instant::now();
    let result: Result<&str, Error> = policy
        .retrying_async(async || Err(Error::Busy(0)))
        .timeout(Duration::from_millis(1500))
        .fallback(|e, g| {
            assert_eq!((e, g.reason), (Error::TimedOut, GiveUpReason::Timeout));
            Ok("stale")
        })
        .call_async()
        .await;
    assert_eq!(result, Ok("stale"));
    assert_eq!(start.elapsed(), Duration::from_millis(1500));
}
