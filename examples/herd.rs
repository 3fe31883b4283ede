//! The thundering herd of the AWS Architecture Blog post "Exponential Backoff
//! And Jitter" (Marc Brooker, 2015), replayed as a deterministic
//! discrete-event simulation, with every delay drawn by `backoff-runtime`.
//!
//! ```text
//! cargo run --release --example herd                      # table, 100 clients, 20 runs
//! cargo run --release --example herd -- --clients 50 --runs 100 --seed 7 --json
//! ```
//!
//! # The experiment
//!
//! N clients start at the same instant, and each must make exactly one
//! optimistic-concurrency (OCC) update to a single shared record. An attempt
//! is a read then a conditional write:
//!
//! 1. the client sends a read; the server answers with the record's version;
//! 2. the client sends a write conditioned on that version; the server
//!    accepts it only if the version is still current (and bumps it),
//!    otherwise rejects it;
//! 3. on a rejection the client sleeps the policy's next delay and starts
//!    again at 1 with a fresh read; on success it is done.
//!
//! The simulation reports, per run, `calls` (every write that reached the
//! server, accepted or rejected: the work the record's owner had to do) and
//! the completion time (when the last client learned that its write
//! succeeded). The tables average both over independent runs.
//!
//! # Model choices
//!
//! They follow the simulator that produced the post's figures
//! (`aws-samples/aws-arch-backoff-simulator`, `backoff_simulator.py`):
//!
//! - **Four network hops per attempt.** Read request, read reply, write
//!   request, write reply are separate messages; the read and the write are
//!   two full round trips, so another client's write can land in between
//!   (the window that makes OCC contend).
//! - **Hop latency `|normal(10 ms, 2 ms)|`**, drawn independently for every
//!   message (Box–Muller over
//!   [`JitterRng::unit_f64`](backoff_runtime::JitterRng::unit_f64): `rand`
//!   is not a dependency of the examples).
//! - **An instantaneous, non-serializing server.** A message is handled the
//!   moment it arrives: no queueing, no service time, no capacity limit.
//!   Contention costs only failed writes and the extra round trips, exactly
//!   as in the original; messages arriving at the same virtual instant are
//!   handled in the order they were sent.
//! - **The backoff is added to the latency of the next read request**: after
//!   a rejected write the client's next read reaches the server
//!   `sleep + hop` later. The first read is sent at time zero, with no sleep.
//! - **Strategies** (the post's base 5 ms, cap 2 s; every one retries
//!   without limit): `none` retries at once
//!   ([`Policy::immediate`](backoff_runtime::Policy::immediate));
//!   `exponential` sleeps `min(2 s, 10 ms · 2^(k−1))` before retry k, which is
//!   the post's `min(cap, base · 2^k)` with base 5 ms; `full` and `equal` add
//!   full and equal jitter to it; `decorrelated` sleeps
//!   `min(2 s, uniform(5 ms, 3 · previous))`. Each client owns a
//!   [`RetryState`](backoff_runtime::RetryState) of its own copy of the
//!   policy, seeded with [`Policy::seed`](backoff_runtime::Policy::seed), so
//!   the backoff schedules are the runtime's, not a copy of its formulas.
//! - **Determinism.** Virtual time, a priority queue of messages ordered by
//!   arrival time (then by send order), and seeds derived with SplitMix64
//!   from `(seed, run)` for the network and `(seed, run, client)` for each
//!   client's jitter. The same command line prints the same numbers. The
//!   original averaged 100 runs; this one defaults to 20 (`--runs`).
//!
//! # Results, 100 clients
//!
//! The post's figures, and this simulation's with the defaults (20 runs,
//! seed 1):
//!
//! | strategy | calls, post | calls, here | completion, post | completion, here |
//! |---|---|---|---|---|
//! | none | 2,420 | 2,421 | 2.0 s | 2.0 s |
//! | exponential | 1,855 | 1,839 | 63 s | 62 s |
//! | full | 795 | 794 | 4.9 s | 4.9 s |
//! | equal | 812 | 809 | 6.7 s | 6.5 s |
//! | decorrelated | 998 | 998 | 4.6 s | 4.5 s |
//!
//! The `visualize` example includes this file as a module (`#[path]`) and
//! charts `sim` over 10 to 200 clients.

use std::process::ExitCode;

use sim::Strategy;

/// The simulation, usable on its own: [`sim::simulate`] runs one experiment,
/// [`sim::average`] the mean of several.
pub(crate) mod sim {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    use std::time::Duration;

    use backoff_runtime::{Jitter, JitterRng, Policy, RetryState};

    /// Mean one-way network latency.
    const HOP_MEAN_MS: f64 = 10.0;
    /// Standard deviation of the one-way network latency.
    const HOP_SD_MS: f64 = 2.0;

    /// A backoff strategy of the post, with its parameters.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Strategy {
        /// Retry at once.
        None,
        /// Capped exponential backoff, no jitter.
        Exponential,
        /// Capped exponential backoff, full jitter.
        Full,
        /// Capped exponential backoff, equal jitter.
        Equal,
        /// Decorrelated jitter.
        Decorrelated,
    }

    impl Strategy {
        /// Every strategy, in the post's order.
        pub(crate) const ALL: [Strategy; 5] = [
            Strategy::None,
            Strategy::Exponential,
            Strategy::Full,
            Strategy::Equal,
            Strategy::Decorrelated,
        ];

        /// The name used on the command line and in the output.
        pub(crate) const fn name(self) -> &'static str {
            match self {
                Strategy::None => "none",
                Strategy::Exponential => "exponential",
                Strategy::Full => "full",
                Strategy::Equal => "equal",
                Strategy::Decorrelated => "decorrelated",
            }
        }

        /// The strategy's policy (unseeded), with unlimited attempts.
        pub(crate) const fn policy(self) -> Policy {
            const CAP: Duration = Duration::from_secs(2);
            const fn exponential(jitter: Jitter) -> Policy {
                Policy::exponential(Duration::from_millis(10))
                    .factor(2.0)
                    .max_delay(CAP)
                    .jitter(jitter)
            }
            let policy = match self {
                Strategy::None => Policy::immediate(),
                Strategy::Exponential => exponential(Jitter::None),
                Strategy::Full => exponential(Jitter::Full),
                Strategy::Equal => exponential(Jitter::Equal),
                Strategy::Decorrelated => {
                    Policy::decorrelated(Duration::from_millis(5)).max_delay(CAP)
                }
            };
            policy.unlimited_attempts()
        }
    }

    /// What one run measured.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub(crate) struct Outcome {
        /// Writes that reached the server, accepted or rejected.
        pub(crate) calls: u64,
        /// When the last client received its write's acceptance.
        pub(crate) completion: Duration,
    }

    /// The mean of several runs.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub(crate) struct Summary {
        /// The strategy simulated.
        pub(crate) strategy: Strategy,
        /// Number of clients.
        pub(crate) clients: usize,
        /// Mean number of writes per run.
        pub(crate) calls: f64,
        /// Mean completion time, in seconds.
        pub(crate) completion_s: f64,
    }

    /// A message in flight, delivered when its time comes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Message {
        /// A client's read request reaches the server.
        Read { client: usize },
        /// The server's answer to a read reaches the client.
        ReadReply { client: usize, version: u64 },
        /// A client's write, conditioned on `version`, reaches the server.
        Write { client: usize, version: u64 },
        /// The server's verdict on a write reaches the client.
        WriteReply { client: usize, accepted: bool },
    }

    /// The event queue: messages by delivery time, then by send order.
    struct Queue {
        heap: BinaryHeap<Reverse<(Duration, u64, Message)>>,
        sent: u64,
    }

    impl Queue {
        fn new(capacity: usize) -> Self {
            Queue {
                heap: BinaryHeap::with_capacity(capacity),
                sent: 0,
            }
        }

        fn send(&mut self, at: Duration, message: Message) {
            self.heap.push(Reverse((at, self.sent, message)));
            self.sent += 1;
        }

        fn next(&mut self) -> Option<(Duration, Message)> {
            self.heap
                .pop()
                .map(|Reverse((at, _, message))| (at, message))
        }
    }

    /// The network: every hop takes `|normal(10 ms, 2 ms)|`.
    struct Network {
        rng: JitterRng,
        /// Box–Muller draws normals in pairs; the second waits here.
        spare: Option<f64>,
    }

    impl Network {
        fn new(seed: u64) -> Self {
            Network {
                rng: JitterRng::from_seed(seed),
                spare: None,
            }
        }

        /// A standard normal deviate (Box–Muller).
        fn standard_normal(&mut self) -> f64 {
            if let Some(z) = self.spare.take() {
                return z;
            }
            // 1 − u lies in (0, 1], so the logarithm is finite.
            let radius = (-2.0 * (1.0 - self.rng.unit_f64()).ln()).sqrt();
            let angle = std::f64::consts::TAU * self.rng.unit_f64();
            self.spare = Some(radius * angle.sin());
            radius * angle.cos()
        }

        /// The latency of one message.
        fn hop(&mut self) -> Duration {
            let ms = (HOP_MEAN_MS + HOP_SD_MS * self.standard_normal()).abs();
            Duration::from_secs_f64(ms / 1000.0)
        }
    }

    /// SplitMix64's output function: a well-mixed 64-bit hash.
    const fn splitmix64(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An independent seed for `stream` under `seed`.
    pub(crate) const fn derive_seed(seed: u64, stream: u64) -> u64 {
        splitmix64(seed ^ splitmix64(stream))
    }

    /// One experiment: `clients` clients update the record once each.
    ///
    /// `seed` fixes the network (stream 0) and every client's jitter
    /// (stream `client + 1`).
    pub(crate) fn simulate(strategy: Strategy, clients: usize, seed: u64) -> Outcome {
        let mut network = Network::new(derive_seed(seed, 0));
        let policies: Vec<Policy> = (0..clients as u64)
            .map(|client| strategy.policy().seed(derive_seed(seed, client + 1)))
            .collect();
        // One retry loop per client, driven by hand: the runtime computes
        // every sleep; the simulation only decides when attempts fail.
        let mut retries: Vec<RetryState<'_>> = policies.iter().map(Policy::start).collect();

        let mut queue = Queue::new(clients);
        for client in 0..clients {
            queue.send(network.hop(), Message::Read { client });
        }

        let mut current = 0u64; // the record's version, held by the server
        let mut calls = 0u64;
        let mut completion = Duration::ZERO;
        while let Some((now, message)) = queue.next() {
            match message {
                Message::Read { client } => {
                    let reply = Message::ReadReply {
                        client,
                        version: current,
                    };
                    queue.send(now + network.hop(), reply);
                }
                Message::ReadReply { client, version } => {
                    queue.send(now + network.hop(), Message::Write { client, version });
                }
                Message::Write { client, version } => {
                    calls += 1;
                    let accepted = version == current;
                    if accepted {
                        current += 1;
                    }
                    let reply = Message::WriteReply { client, accepted };
                    queue.send(now + network.hop(), reply);
                }
                Message::WriteReply { accepted: true, .. } => completion = now,
                Message::WriteReply {
                    client,
                    accepted: false,
                } => {
                    let sleep = retries[client]
                        .next_delay()
                        .expect("the policies retry without limit");
                    queue.send(now + sleep + network.hop(), Message::Read { client });
                }
            }
        }
        Outcome { calls, completion }
    }

    /// The mean of `runs` experiments; run `r` uses seed
    /// `derive_seed(seed, r)`.
    pub(crate) fn average(strategy: Strategy, clients: usize, runs: u32, seed: u64) -> Summary {
        let (mut calls, mut completion_s) = (0.0, 0.0);
        for run in 0..runs {
            let outcome = simulate(strategy, clients, derive_seed(seed, u64::from(run)));
            calls += outcome.calls as f64;
            completion_s += outcome.completion.as_secs_f64();
        }
        let runs = f64::from(runs.max(1));
        Summary {
            strategy,
            clients,
            calls: calls / runs,
            completion_s: completion_s / runs,
        }
    }
}

/// Command-line options.
struct Options {
    clients: usize,
    runs: u32,
    seed: u64,
    json: bool,
}

const USAGE: &str = "usage: herd [--clients N] [--runs R] [--seed S] [--json]";

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        clients: 100,
        runs: 20,
        seed: 1,
        json: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--clients" => options.clients = parse(&value("--clients")?, "--clients")?,
            "--runs" => options.runs = parse(&value("--runs")?, "--runs")?,
            "--seed" => options.seed = parse(&value("--seed")?, "--seed")?,
            "--json" => options.json = true,
            "-h" | "--help" => return Err(String::new()), // not an error: usage
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.clients == 0 || options.runs == 0 {
        return Err("--clients and --runs must be at least 1".into());
    }
    Ok(options)
}

fn parse<T: std::str::FromStr>(text: &str, name: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{name}: `{text}` is not a valid number"))
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(message) if message.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("herd: {message}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };

    if !options.json {
        println!(
            "{} clients, mean of {} runs, seed {}",
            options.clients, options.runs, options.seed
        );
        println!(
            "{:<14} {:>8} {:>12} {:>16}",
            "strategy", "clients", "mean calls", "mean completion"
        );
    }
    for strategy in Strategy::ALL {
        let s = sim::average(strategy, options.clients, options.runs, options.seed);
        if options.json {
            println!(
                r#"{{"strategy": "{}", "clients": {}, "calls": {:.2}, "completion_s": {:.4}}}"#,
                s.strategy.name(),
                s.clients,
                s.calls,
                s.completion_s
            );
        } else {
            println!(
                "{:<14} {:>8} {:>12.1} {:>14.3} s",
                s.strategy.name(),
                s.clients,
                s.calls,
                s.completion_s
            );
        }
    }
    ExitCode::SUCCESS
}
