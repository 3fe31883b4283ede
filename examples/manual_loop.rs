//! The runtime without the attribute, in the EventSauce style: a `Policy`
//! does not run your operation, it answers "how long until the next try?"
//! and you drive the loop.
//!
//! 1. build a policy and print its schedule (`Policy::delays`), seeded so
//!    the jitter, and this printout, are the same on every run;
//! 2. drive `Policy::start` / `RetryState::next_delay_for` by hand, with a
//!    `Decision` per error and `std::thread::sleep`;
//! 3. let the policy run the loop: `Policy::retry` (blocking) and
//!    `Policy::retry_async` (tokio).
//!
//! ```text
//! cargo run -p backoff-workspace-tests --example manual_loop
//! ```

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use backoff_runtime::{Decision, Jitter, Policy};

/// Why a simulated message broker refused a message.
#[derive(Debug)]
enum PublishError {
    /// Overloaded: try again later.
    Busy,
    /// Rate limited, with the broker's hint of when to come back.
    Throttled(Duration),
    /// The message is malformed: retrying cannot help.
    Invalid,
}

fn classify(e: &PublishError) -> Decision {
    match e {
        PublishError::Busy => Decision::Retry,
        PublishError::Throttled(after) => Decision::RetryAfter(*after),
        PublishError::Invalid => Decision::Stop,
    }
}

/// A broker that answers from a script, then accepts everything.
struct Broker {
    script: VecDeque<PublishError>,
    next_offset: u64,
}

impl Broker {
    fn new(script: impl IntoIterator<Item = PublishError>) -> Self {
        Broker {
            script: script.into_iter().collect(),
            next_offset: 0,
        }
    }

    /// Publishes a message, returning its offset in the log.
    fn publish(&mut self, message: &str) -> Result<u64, PublishError> {
        println!("    publish({message:?})");
        match self.script.pop_front() {
            Some(e) => Err(e),
            None => {
                self.next_offset += 1;
                Ok(self.next_offset)
            }
        }
    }
}

/// The hand-written loop: the operation stays in our hands, the policy only
/// hands out delays (or `None` to give up).
fn publish_with_retries(
    policy: &Policy,
    broker: &mut Broker,
    message: &str,
) -> Result<u64, PublishError> {
    let mut state = policy.start();
    loop {
        let error = match broker.publish(message) {
            Ok(offset) => return Ok(offset),
            Err(e) => e,
        };
        let decision = classify(&error);
        match state.next_delay_for(decision) {
            Some(delay) => {
                let event = state.event(delay);
                println!(
                    "    attempt {} failed at {:>3} ms: {error:?} -> {decision:?}, sleep {} ms",
                    event.attempt,
                    event.elapsed.as_millis(),
                    delay.as_millis()
                );
                std::thread::sleep(delay);
            }
            None => {
                println!(
                    "    attempt {} failed: {error:?} -> {decision:?}, give up",
                    state.attempt()
                );
                return Err(error);
            }
        }
    }
}

fn main() {
    let policy = Policy::exponential(Duration::from_millis(50))
        .factor(2.0)
        .max_delay(Duration::from_millis(400))
        .jitter(Jitter::Full)
        .attempts(6)
        .max_elapsed(Duration::from_secs(2))
        .seed(42);

    // 1. The schedule: attempts - 1 delays, each uniform in 0..=50·2^(k-1) ms, at most 400 ms.
    let schedule: Vec<u128> = policy.delays().map(|d| d.as_millis()).collect();
    println!("1. schedule (seed 42): {schedule:?} ms\n");

    // 2. A hand-written loop. Seeded, each call draws the same delays as the
    // schedule above; a `RetryAfter` waits the broker's hint instead and does
    // not advance the schedule.
    println!("2. publish to a broker that is busy, throttles, is busy again, then accepts:");
    let mut broker = Broker::new([
        PublishError::Busy,
        PublishError::Throttled(Duration::from_millis(30)),
        PublishError::Busy,
    ]);
    let result = publish_with_retries(&policy, &mut broker, "order #1");
    println!("  => {result:?}\n");

    println!("   publish a malformed message:");
    let mut broker = Broker::new([PublishError::Busy, PublishError::Invalid]);
    let result = publish_with_retries(&policy, &mut broker, "order #2 (malformed)");
    println!("  => {result:?}\n");

    // 3. The policy runs the loop; every error is retried.
    println!("3. Policy::retry and Policy::retry_async:");
    let start = Instant::now();
    let mut calls = 0;
    let result: Result<u32, &str> = policy.retry(|| {
        calls += 1;
        if calls < 3 { Err("busy") } else { Ok(calls) }
    });
    println!(
        "  retry        => {result:?} after {calls} calls, {} ms",
        start.elapsed().as_millis()
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let start = Instant::now();
    let mut calls = 0;
    let result: Result<u32, &str> = runtime.block_on(policy.retry_async(async || {
        calls += 1;
        tokio::task::yield_now().await; // some async work
        if calls < 3 { Err("busy") } else { Ok(calls) }
    }));
    println!(
        "  retry_async  => {result:?} after {calls} calls, {} ms",
        start.elapsed().as_millis()
    );
}
