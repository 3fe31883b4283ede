//! `throttle = EXPR` on `#[retry]` functions: client-side adaptive
//! throttling (Google SRE "Handling Overload") before each attempt.
//!
//! - a rejection fails the call fast with `E::from(Rejected)`, without
//!   running the body, and `on_giveup` sees `GiveUpReason::Rejected`;
//! - an attempt counts as accepted when it succeeds or `when` says `Stop`,
//!   and as not accepted when its error is retried;
//! - against a backend that rejects everything, the attempts that reach it
//!   fall to a small fraction of what the attempt limit allows;
//! - sync and async functions, `static`s and fields.

use std::cell::Cell;
use std::time::Duration;

use backoff_runtime::{AdaptiveThrottle, Decision, GiveUp, GiveUpReason, Rejected, retry};

#[derive(Debug, PartialEq)]
enum Error {
    Overloaded,
    NotFound,
    Throttled,
}

impl From<Rejected> for Error {
    fn from(_: Rejected) -> Self {
        Error::Throttled
    }
}

fn overload_only(e: &Error) -> Decision {
    match e {
        Error::Overloaded => Decision::Retry,
        _ => Decision::Stop,
    }
}

#[test]
fn a_backend_rejecting_everything_sees_a_fraction_of_the_attempts() {
    static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
    thread_local!(static SENT: Cell<u32> = const { Cell::new(0) });

    #[retry(immediate, attempts = 3, when = overload_only, throttle = THROTTLE)]
    fn call() -> Result<(), Error> {
        SENT.with(|s| s.set(s.get() + 1));
        Err(Error::Overloaded)
    }

    let mut rejected_locally = 0;
    for _ in 0..200 {
        match call() {
            Err(Error::Throttled) => rejected_locally += 1,
            Err(Error::Overloaded) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    let sent = SENT.with(Cell::get);
    // Without the throttle: 600 attempts. With it, the backend receives
    // about twice what it accepts (nothing), plus the first few.
    assert!(sent < 60, "{sent} attempts reached the backend");
    assert!(
        rejected_locally > 150,
        "{rejected_locally} calls rejected locally"
    );
    let (requests, accepts) = THROTTLE.counts(std::time::Instant::now());
    assert_eq!(accepts, 0);
    assert!(
        requests >= u64::from(sent),
        "{requests} requests counted for {sent} sent"
    );
}

#[test]
fn answers_the_backend_gave_count_as_accepted_and_nothing_is_rejected() {
    static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
    thread_local!(static CALLS: Cell<u32> = const { Cell::new(0) });

    // Every other call is a `NotFound` (`Stop`: the backend answered), the
    // rest succeed: all accepted, so the throttle never rejects.
    #[retry(immediate, attempts = 3, when = overload_only, throttle = THROTTLE)]
    fn call() -> Result<u32, Error> {
        let n = CALLS.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        if n.is_multiple_of(2) {
            Err(Error::NotFound)
        } else {
            Ok(n)
        }
    }

    for i in 1..=500u32 {
        let result = call();
        if i.is_multiple_of(2) {
            assert_eq!(result, Err(Error::NotFound));
        } else {
            assert_eq!(result, Ok(i));
        }
    }
    let (requests, accepts) = THROTTLE.counts(std::time::Instant::now());
    assert_eq!((requests, accepts), (500, 500));
    assert_eq!(THROTTLE.reject_probability(std::time::Instant::now()), 0.0);
}

#[test]
fn a_rejection_does_not_run_the_body_and_reports_rejected() {
    // k = 1 and two failures recorded: P(reject) = 2/3 and more with each
    // request; drive it until a call is rejected.
    static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(1.0, Duration::from_secs(120));
    thread_local! {
        static RUNS: Cell<u32> = const { Cell::new(0) };
        static REASON: Cell<Option<GiveUpReason>> = const { Cell::new(None) };
        static ATTEMPTS: Cell<u32> = const { Cell::new(u32::MAX) };
    }
    fn record(_: &Result<(), Error>, g: &GiveUp) {
        REASON.with(|r| r.set(Some(g.reason)));
        ATTEMPTS.with(|a| a.set(g.attempts));
    }

    #[retry(immediate, attempts = 1, throttle = THROTTLE, on_giveup = record)]
    fn call() -> Result<(), Error> {
        RUNS.with(|r| r.set(r.get() + 1));
        Err(Error::Overloaded)
    }

    let mut seen_rejection = false;
    for _ in 0..100 {
        let before = RUNS.with(Cell::get);
        let result = call();
        let ran = RUNS.with(Cell::get) - before;
        match result {
            Err(Error::Throttled) => {
                assert_eq!(ran, 0, "a rejected call ran its body");
                assert_eq!(REASON.with(Cell::get), Some(GiveUpReason::Rejected));
                assert_eq!(ATTEMPTS.with(Cell::get), 0, "no attempt was made");
                seen_rejection = true;
            }
            Err(Error::Overloaded) => {
                assert_eq!(ran, 1);
                assert_eq!(REASON.with(Cell::get), Some(GiveUpReason::Attempts));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(seen_rejection);
}

struct Client {
    throttle: AdaptiveThrottle,
    sent: u32,
}

impl Client {
    #[retry(constant(delay = "10ms"), attempts = 4, throttle = self.throttle)]
    async fn get(&mut self) -> Result<(), backoff_runtime::Error<std::io::Error>> {
        self.sent += 1;
        Err(std::io::Error::other("503"))?
    }
}

#[tokio::test(start_paused = true)]
async fn an_async_method_with_its_own_throttle_in_a_field() {
    let mut client = Client {
        throttle: AdaptiveThrottle::new(2.0, Duration::from_secs(120)),
        sent: 0,
    };
    let mut rejected = 0;
    for _ in 0..100 {
        match client.get().await {
            Err(backoff_runtime::Error::Rejected) => rejected += 1,
            Err(backoff_runtime::Error::Inner(_)) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(
        client.sent < 100,
        "{} attempts sent, of up to 400",
        client.sent
    );
    assert!(rejected > 50, "{rejected} calls rejected");
}

#[tokio::test(start_paused = true)]
async fn the_future_stays_send_with_a_throttle() {
    static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));

    #[retry(exponential(base = "1ms"), attempts = 3, throttle = THROTTLE)]
    async fn call(n: u32) -> Result<u32, std::io::Error> {
        Ok(n)
    }

    let handle = tokio::spawn(call(7));
    assert_eq!(handle.await.unwrap().unwrap(), 7);
    assert_eq!(THROTTLE.counts(tokio::time::Instant::now().into_std()).1, 1);
}
