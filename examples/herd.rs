//! The thundering herd of the AWS Architecture Blog post "Exponential Backoff
//! And Jitter" (Marc Brooker, 2015), replayed as a deterministic
//! discrete-event simulation, with every delay drawn by `backoff-runtime`.
//!
//! ```text
//! cargo run --release -p backoff-workspace-tests --example herd                      # table, 100 clients, 20 runs
//! cargo run --release -p backoff-workspace-tests --example herd -- --clients 50 --runs 100 --seed 7 --json
//! cargo run --release -p backoff-workspace-tests --example herd -- --down            # a full outage, with and without a budget
//! cargo run --release -p backoff-workspace-tests --example herd -- --down --requests 1000 --attempts 5 --json
//! cargo run --release -p backoff-workspace-tests --example herd -- --overload        # a server over capacity, with and without a throttle
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
//! # A full outage, with and without a retry budget (`--down`)
//!
//! The herd above contends for a healthy service. `--down` asks what
//! retries cost a service that is down: every write fails. `R` requests
//! arrive over time (a Poisson stream, `--rate` per second, 100 by
//! default); each is one write (a request hop to the server, a reply hop
//! back, the same `|normal(10 ms, 2 ms)|` hops), retried on failure with
//! `attempts = A` (5 by default) of the `full` strategy above (exponential
//! from 10 ms, factor 2, cap 2 s, full jitter): a request that never
//! succeeds costs `A` calls. Each run is simulated twice: with every
//! request on its own, and with every request's
//! [`RetryState`](backoff_runtime::RetryState) sharing one
//! [`RetryBudget`](backoff_runtime::RetryBudget)
//! ([`with_budget`](backoff_runtime::RetryState::with_budget); 10 tokens,
//! 0.1 per success by default): each retry spends a token, each success
//! gives back 0.1, and without a token a request gives up after its
//! first call.
//!
//! In a full outage nothing succeeds, so nothing refills the bucket: the
//! fleet makes at most `max_tokens` retries in all, and the calls per
//! request fall to `1 + max_tokens / R`, against `A` without the budget.
//! Where some calls succeed (`--fail-rate p` below 1), the retries are
//! bounded by `max_tokens + token_ratio · successes`, so calls per request
//! stay below `1 + token_ratio + max_tokens / R`: the budget's ratio bounds
//! the extra load whatever the number of requests.
//!
//! `cargo run --release -p backoff-workspace-tests --example herd -- --down` (20 runs, seed 1):
//!
//! | requests | calls per request, no budget | with the budget (10 tokens, 0.1) | bound `1 + 10 / R` |
//! |---|---|---|---|
//! | 10 | 5.00 | 2.00 | 2.00 |
//! | 100 | 5.00 | 1.10 | 1.10 |
//! | 1,000 | 5.00 | 1.01 | 1.01 |
//! | 10,000 | 5.00 | 1.00 | 1.00 |
//!
//! With half the writes failing (`--fail-rate 0.5`) and 1,000 requests: 1.94
//! calls per request without the budget, 1.06 with it (at most 1.06).
//!
//! # A server over capacity, with and without adaptive throttling (`--overload`)
//!
//! `--overload` gives the server a capacity: it accepts at most `C`
//! writes a second (`--capacity`, 100 by default; a token bucket holding a
//! tenth of a second's worth, without a queue) and rejects the excess at
//! once. Requests arrive for `--seconds`
//! (600) at `--offered` times the capacity (10, so the server rejects about
//! 90 % of what it is offered); each is retried on rejection with
//! `attempts = A` of the `full` strategy above. Each run is simulated
//! twice: with every attempt sent, and with every attempt first asking one
//! shared [`AdaptiveThrottle`](backoff_runtime::AdaptiveThrottle) (`k = 2`
//! unless `--k`, a two-minute window, the SRE book's): a local rejection ends the request
//! at once with `Rejected` (it never reaches the server), a write the
//! server accepts is reported `accepted`, one it rejects `rejected`.
//!
//! The measure is the load reaching the server against what it accepts:
//! without the throttle every request's retries reach it (close to
//! `attempts` calls per request, ten times what it accepts); with it the
//! clients send about `k` times what the server accepts (the SRE book's
//! bound), and the server accepts as much as before. `--k` sets the
//! throttle's `k`, `--burst` the server's bucket in seconds of capacity: a
//! server that holds no burst (`--burst 0.01` at 100/s) accepts only about
//! `C·(k−1)/k` of its capacity through a throttle. The figures are in
//! `docs/fleets.md`.
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

    use backoff_runtime::{
        AdaptiveThrottle, Jitter, JitterRng, Policy, RetryBudget, RetryState, ThrottlePermit,
    };

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
    struct Queue<M> {
        heap: BinaryHeap<Reverse<(Duration, u64, M)>>,
        sent: u64,
    }

    impl<M: Ord> Queue<M> {
        fn new(capacity: usize) -> Self {
            Queue {
                heap: BinaryHeap::with_capacity(capacity),
                sent: 0,
            }
        }

        fn send(&mut self, at: Duration, message: M) {
            self.heap.push(Reverse((at, self.sent, message)));
            self.sent += 1;
        }

        fn next(&mut self) -> Option<(Duration, M)> {
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

    /// The service and the load of the outage experiment (`--down`).
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub(crate) struct Outage {
        /// Requests in a run.
        pub(crate) requests: usize,
        /// Calls allowed per request, the first included.
        pub(crate) attempts: u32,
        /// Requests arriving per second (a Poisson stream).
        pub(crate) rate_per_s: f64,
        /// The chance that a write fails; 1 is a full outage.
        pub(crate) fail_rate: f64,
        /// The shared budget's size.
        pub(crate) max_tokens: u32,
        /// What a success gives back to it.
        pub(crate) token_ratio: f64,
    }

    /// What one outage run measured.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) struct OutageOutcome {
        /// Writes that reached the server.
        pub(crate) calls: u64,
        /// Requests that ended with a success.
        pub(crate) succeeded: u64,
    }

    /// A message of the outage experiment.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Call {
        /// A request's write reaches the server.
        Write { request: usize },
        /// The server's verdict reaches the client.
        Reply { request: usize, ok: bool },
    }

    /// One outage run: `outage.requests` requests arrive and retry with the
    /// `full` strategy and `outage.attempts` attempts, each on its own or
    /// (`shared_budget`) all sharing one [`RetryBudget`].
    ///
    /// `seed` fixes the network (stream 0), the arrivals and the failures
    /// (stream 1) and each request's jitter (stream `request + 2`), so the
    /// runs with and without the budget see the same arrivals.
    pub(crate) fn simulate_outage(outage: Outage, shared_budget: bool, seed: u64) -> OutageOutcome {
        let mut network = Network::new(derive_seed(seed, 0));
        let mut service = JitterRng::from_seed(derive_seed(seed, 1));
        let budget = RetryBudget::new(outage.max_tokens, outage.token_ratio);
        let policies: Vec<Policy> = (0..outage.requests as u64)
            .map(|request| {
                Strategy::Full
                    .policy()
                    .attempts(outage.attempts)
                    .seed(derive_seed(seed, request + 2))
            })
            .collect();
        let mut retries: Vec<RetryState<'_>> = policies
            .iter()
            .map(|policy| {
                if shared_budget {
                    policy.start().with_budget(&budget)
                } else {
                    policy.start()
                }
            })
            .collect();

        let mut queue = Queue::new(outage.requests);
        let mut arrival = Duration::ZERO;
        for request in 0..outage.requests {
            // Exponential gaps: 1 − u lies in (0, 1], so the logarithm is finite.
            let gap = -(1.0 - service.unit_f64()).ln() / outage.rate_per_s;
            arrival += Duration::from_secs_f64(gap);
            queue.send(arrival + network.hop(), Call::Write { request });
        }

        let (mut calls, mut succeeded) = (0, 0);
        while let Some((now, call)) = queue.next() {
            match call {
                Call::Write { request } => {
                    calls += 1;
                    let ok = service.unit_f64() >= outage.fail_rate;
                    queue.send(now + network.hop(), Call::Reply { request, ok });
                }
                Call::Reply { request, ok: true } => {
                    retries[request].on_success();
                    succeeded += 1;
                }
                Call::Reply { request, ok: false } => {
                    if let Some(sleep) = retries[request].next_delay() {
                        let at = now + sleep + network.hop();
                        queue.send(at, Call::Write { request });
                    }
                }
            }
        }
        OutageOutcome { calls, succeeded }
    }

    /// The means of `runs` outage runs without and with the budget.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub(crate) struct OutageSummary {
        /// The experiment.
        pub(crate) outage: Outage,
        /// Mean calls per run, each request on its own.
        pub(crate) calls_alone: f64,
        /// Mean calls per run, sharing the budget.
        pub(crate) calls_budget: f64,
        /// Mean successes per run, sharing the budget.
        pub(crate) succeeded_budget: f64,
    }

    impl OutageSummary {
        /// Calls per request, each request on its own.
        pub(crate) fn per_request_alone(&self) -> f64 {
            self.calls_alone / self.outage.requests as f64
        }

        /// Calls per request, sharing the budget.
        pub(crate) fn per_request_budget(&self) -> f64 {
            self.calls_budget / self.outage.requests as f64
        }

        /// What the budget allows at most, per request: one call, plus
        /// `max_tokens + token_ratio · successes` retries over all requests,
        /// and never more than `attempts`.
        pub(crate) fn bound(&self) -> f64 {
            let o = &self.outage;
            let retries = f64::from(o.max_tokens) + o.token_ratio * self.succeeded_budget;
            (1.0 + retries / o.requests as f64).min(f64::from(o.attempts))
        }
    }

    /// The mean of `runs` outage runs of each kind; run `r` uses seed
    /// `derive_seed(seed, r)` for both.
    pub(crate) fn average_outage(outage: Outage, runs: u32, seed: u64) -> OutageSummary {
        let (mut alone, mut budget, mut succeeded) = (0.0, 0.0, 0.0);
        for run in 0..runs {
            let seed = derive_seed(seed, u64::from(run));
            alone += simulate_outage(outage, false, seed).calls as f64;
            let shared = simulate_outage(outage, true, seed);
            budget += shared.calls as f64;
            succeeded += shared.succeeded as f64;
        }
        let runs = f64::from(runs.max(1));
        OutageSummary {
            outage,
            calls_alone: alone / runs,
            calls_budget: budget / runs,
            succeeded_budget: succeeded / runs,
        }
    }

    /// The server and the load of the capacity experiment (`--overload`).
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub(crate) struct Overload {
        /// Writes the server accepts per second.
        pub(crate) capacity: f64,
        /// Requests arriving per second, a multiple of `capacity`.
        pub(crate) offered: f64,
        /// How long requests arrive.
        pub(crate) seconds: f64,
        /// Calls allowed per request, the first included.
        pub(crate) attempts: u32,
        /// The throttle's `k`: it lets about `k` times the accepted writes
        /// through.
        pub(crate) k: f64,
        /// The server's bucket, in seconds of capacity (0.1 by default,
        /// at least one write).
        pub(crate) burst_s: f64,
    }

    /// What one capacity run measured.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub(crate) struct OverloadOutcome {
        /// Requests made.
        pub(crate) requests: u64,
        /// Writes that reached the server.
        pub(crate) calls: u64,
        /// Writes the server accepted.
        pub(crate) accepted: u64,
        /// Attempts the throttle rejected locally.
        pub(crate) rejected_locally: u64,
    }

    /// A message of the capacity experiment.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Attempt {
        /// A request (or its retry) is about to be sent.
        Send { request: usize },
        /// Its write reaches the server.
        Write { request: usize },
        /// The server's verdict reaches the client.
        Reply { request: usize, ok: bool },
    }

    /// One capacity run, with every attempt sent or (`throttled`) each
    /// first asking one shared [`AdaptiveThrottle`]. The same seed gives
    /// both kinds the same arrivals.
    pub(crate) fn simulate_overload(o: Overload, throttled: bool, seed: u64) -> OverloadOutcome {
        let mut network = Network::new(derive_seed(seed, 0));
        let mut arrivals = JitterRng::from_seed(derive_seed(seed, 1));
        let mut draws = JitterRng::from_seed(derive_seed(derive_seed(seed, 1), 1));
        let throttle = AdaptiveThrottle::new(o.k, Duration::from_secs(120));
        let base = std::time::Instant::now();
        let rate = o.capacity * o.offered;
        let mut times = Vec::new();
        let mut arrival = 0.0;
        loop {
            arrival += -(1.0 - arrivals.unit_f64()).ln() / rate;
            if arrival >= o.seconds {
                break;
            }
            times.push(Duration::from_secs_f64(arrival));
        }
        let policies: Vec<Policy> = (0..times.len() as u64)
            .map(|r| {
                Strategy::Full
                    .policy()
                    .attempts(o.attempts)
                    .seed(derive_seed(seed, r + 2))
            })
            .collect();
        let mut retries: Vec<RetryState<'_>> = policies.iter().map(Policy::start).collect();
        let mut permits: Vec<Option<ThrottlePermit<'_>>> = (0..times.len()).map(|_| None).collect();
        let mut queue = Queue::new(times.len());
        for (request, at) in times.iter().enumerate() {
            queue.send(*at, Attempt::Send { request });
        }
        // The server: a token bucket of `capacity` a second holding
        // `burst_s` seconds' worth (at least one), with no queue.
        let burst = (o.capacity * o.burst_s).max(1.0);
        let (mut tokens, mut last) = (burst, Duration::ZERO);
        let mut out = OverloadOutcome {
            requests: times.len() as u64,
            ..OverloadOutcome::default()
        };
        while let Some((now, attempt)) = queue.next() {
            match attempt {
                Attempt::Send { request } => {
                    if throttled {
                        match throttle.try_acquire_with(base + now, || draws.unit_f64()) {
                            Ok(permit) => permits[request] = Some(permit),
                            Err(_rejected) => {
                                // Fails fast: the request ends here.
                                out.rejected_locally += 1;
                                continue;
                            }
                        }
                    }
                    queue.send(now + network.hop(), Attempt::Write { request });
                }
                Attempt::Write { request } => {
                    out.calls += 1;
                    tokens = (tokens + (now - last).as_secs_f64() * o.capacity).min(burst);
                    last = now;
                    let ok = tokens >= 1.0;
                    if ok {
                        out.accepted += 1;
                        tokens -= 1.0;
                    }
                    queue.send(now + network.hop(), Attempt::Reply { request, ok });
                }
                Attempt::Reply { request, ok } => {
                    if let Some(permit) = permits[request].take() {
                        if ok {
                            permit.accepted();
                        } else {
                            permit.rejected();
                        }
                    }
                    if !ok && let Some(sleep) = retries[request].next_delay() {
                        queue.send(now + sleep, Attempt::Send { request });
                    }
                }
            }
        }
        out
    }

    /// The means of `runs` capacity runs without and with the throttle.
    pub(crate) fn average_overload(
        o: Overload,
        runs: u32,
        seed: u64,
    ) -> (OverloadMeans, OverloadMeans) {
        let (mut alone, mut throttled) = (OverloadMeans::default(), OverloadMeans::default());
        for run in 0..runs {
            let seed = derive_seed(seed, u64::from(run));
            alone.add(simulate_overload(o, false, seed), runs);
            throttled.add(simulate_overload(o, true, seed), runs);
        }
        (alone, throttled)
    }

    /// Means over runs of an [`OverloadOutcome`].
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub(crate) struct OverloadMeans {
        pub(crate) requests: f64,
        pub(crate) calls: f64,
        pub(crate) accepted: f64,
        pub(crate) rejected_locally: f64,
    }

    impl OverloadMeans {
        fn add(&mut self, o: OverloadOutcome, runs: u32) {
            let n = f64::from(runs.max(1));
            self.requests += o.requests as f64 / n;
            self.calls += o.calls as f64 / n;
            self.accepted += o.accepted as f64 / n;
            self.rejected_locally += o.rejected_locally as f64 / n;
        }

        /// Writes reaching the server per write it accepted.
        pub(crate) fn load_per_accept(&self) -> f64 {
            self.calls / self.accepted
        }
    }
}

/// Command-line options.
struct Options {
    /// `--overload`: the capacity experiment.
    overload: bool,
    /// `--capacity`: writes the server accepts per second.
    capacity: f64,
    /// `--offered`: the arrival rate as a multiple of the capacity.
    offered: f64,
    /// `--seconds`: how long requests arrive.
    seconds: f64,
    /// `--k`: the throttle's `k`.
    k: f64,
    /// `--burst`: the server's bucket, in seconds of capacity.
    burst_s: f64,
    clients: usize,
    runs: u32,
    seed: u64,
    json: bool,
    /// `--down`: the outage experiment instead of the herd.
    down: bool,
    /// `--requests`: one request count instead of the default list.
    requests: Option<usize>,
    attempts: u32,
    rate_per_s: f64,
    fail_rate: f64,
    max_tokens: u32,
    token_ratio: f64,
}

const USAGE: &str = "usage: herd [--clients N] [--runs R] [--seed S] [--json]
       herd --down [--requests N] [--attempts A] [--rate PER_S] [--fail-rate P]
                   [--budget-tokens T] [--budget-ratio X] [--runs R] [--seed S] [--json]
       herd --overload [--capacity PER_S] [--offered X] [--seconds S] [--attempts A]
                   [--k K] [--burst S] [--runs R] [--seed S] [--json]";

/// The request counts of `--down` without `--requests`.
const DOWN_REQUESTS: [usize; 4] = [10, 100, 1_000, 10_000];

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        overload: false,
        capacity: 100.0,
        offered: 10.0,
        seconds: 600.0,
        k: 2.0,
        burst_s: 0.1,
        clients: 100,
        runs: 20,
        seed: 1,
        json: false,
        down: false,
        requests: None,
        attempts: 5,
        rate_per_s: 100.0,
        fail_rate: 1.0,
        max_tokens: 10,
        token_ratio: 0.1,
    };
    let (mut herd_only, mut down_only) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--clients" => {
                options.clients = parse(&value("--clients")?, "--clients")?;
                herd_only = Some("--clients");
            }
            "--runs" => options.runs = parse(&value("--runs")?, "--runs")?,
            "--seed" => options.seed = parse(&value("--seed")?, "--seed")?,
            "--json" => options.json = true,
            "--down" => options.down = true,
            "--overload" => options.overload = true,
            "--capacity" => options.capacity = parse(&value("--capacity")?, "--capacity")?,
            "--offered" => options.offered = parse(&value("--offered")?, "--offered")?,
            "--seconds" => options.seconds = parse(&value("--seconds")?, "--seconds")?,
            "--k" => options.k = parse(&value("--k")?, "--k")?,
            "--burst" => options.burst_s = parse(&value("--burst")?, "--burst")?,
            "--requests" => options.requests = Some(parse(&value("--requests")?, "--requests")?),
            "--attempts" => options.attempts = parse(&value("--attempts")?, "--attempts")?,
            "--rate" => options.rate_per_s = parse(&value("--rate")?, "--rate")?,
            "--fail-rate" => options.fail_rate = parse(&value("--fail-rate")?, "--fail-rate")?,
            "--budget-tokens" => {
                options.max_tokens = parse(&value("--budget-tokens")?, "--budget-tokens")?;
            }
            "--budget-ratio" => {
                options.token_ratio = parse(&value("--budget-ratio")?, "--budget-ratio")?;
            }
            "-h" | "--help" => return Err(String::new()), // not an error: usage
            other => return Err(format!("unknown argument `{other}`")),
        }
        if matches!(
            arg.as_str(),
            "--requests"
                | "--attempts"
                | "--rate"
                | "--fail-rate"
                | "--budget-tokens"
                | "--budget-ratio"
        ) {
            down_only = Some(arg);
        }
    }
    if options.overload {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if options.down || herd_only.is_some() || options.requests.is_some() {
            return Err(
                "--overload takes --capacity, --offered, --seconds, --attempts, --k, --burst"
                    .into(),
            );
        }
        if !(positive(options.capacity) && positive(options.offered) && positive(options.seconds)) {
            return Err("--capacity, --offered and --seconds must be positive numbers".into());
        }
        if !(positive(options.burst_s) && options.k.is_finite() && options.k >= 1.0) {
            return Err("--burst must be a positive number and --k at least 1".into());
        }
        if options.attempts == 0 || options.runs == 0 {
            return Err("--attempts and --runs must be at least 1".into());
        }
        return Ok(options);
    }
    match (options.down, herd_only, down_only) {
        (true, Some(arg), _) => {
            return Err(format!(
                "{arg} is for the herd, not --down (use --requests)"
            ));
        }
        (false, _, Some(arg)) => return Err(format!("{arg} needs --down")),
        _ => {}
    }
    if options.clients == 0 || options.runs == 0 || options.requests == Some(0) {
        return Err("--clients, --requests and --runs must be at least 1".into());
    }
    if options.attempts == 0 {
        return Err("--attempts must be at least 1".into());
    }
    if !(options.rate_per_s.is_finite() && options.rate_per_s > 0.0) {
        return Err("--rate must be a positive number".into());
    }
    if !(0.0..=1.0).contains(&options.fail_rate) {
        return Err("--fail-rate must lie between 0 and 1".into());
    }
    if !(options.token_ratio.is_finite() && options.token_ratio >= 0.0) {
        return Err("--budget-ratio must be a number, 0 or more".into());
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
    if options.overload {
        overload(&options);
    } else if options.down {
        down(&options);
    } else {
        herd(&options);
    }
    ExitCode::SUCCESS
}

/// The AWS experiment: the table or JSON lines, one per strategy.
fn herd(options: &Options) {
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
}

/// The outage experiment (`--down`): the table or JSON lines, one per
/// request count.
fn down(options: &Options) {
    let counts = match options.requests {
        Some(n) => vec![n],
        None => DOWN_REQUESTS.to_vec(),
    };
    if !options.json {
        let service = if options.fail_rate >= 1.0 {
            "service down (every write fails)".to_owned()
        } else {
            format!("{:.0}% of writes fail", 100.0 * options.fail_rate)
        };
        println!(
            "{service}; requests arrive at {}/s; attempts = {}, exponential 10 ms x2 up to 2 s, full jitter",
            options.rate_per_s, options.attempts
        );
        println!(
            "budget: {} tokens, {} per success; mean of {} runs, seed {}",
            options.max_tokens, options.token_ratio, options.runs, options.seed
        );
        println!(
            "{:>8}   {:-^25}   {:-^40}",
            "", " no budget ", " shared budget "
        );
        println!(
            "{:>8}   {:>10} {:>14}   {:>10} {:>14} {:>14}",
            "requests", "calls", "per request", "calls", "per request", "at most"
        );
    }
    for requests in counts {
        let outage = sim::Outage {
            requests,
            attempts: options.attempts,
            rate_per_s: options.rate_per_s,
            fail_rate: options.fail_rate,
            max_tokens: options.max_tokens,
            token_ratio: options.token_ratio,
        };
        let s = sim::average_outage(outage, options.runs, options.seed);
        if options.json {
            println!(
                concat!(
                    r#"{{"mode": "down", "requests": {}, "attempts": {}, "rate_per_s": {}, "#,
                    r#""fail_rate": {}, "budget_tokens": {}, "budget_ratio": {}, "#,
                    r#""calls_no_budget": {:.2}, "calls_budget": {:.2}, "#,
                    r#""per_request_no_budget": {:.4}, "per_request_budget": {:.4}, "bound": {:.4}}}"#
                ),
                requests,
                options.attempts,
                options.rate_per_s,
                options.fail_rate,
                options.max_tokens,
                options.token_ratio,
                s.calls_alone,
                s.calls_budget,
                s.per_request_alone(),
                s.per_request_budget(),
                s.bound()
            );
        } else {
            println!(
                "{:>8}   {:>10.1} {:>14.2}   {:>10.1} {:>14.2} {:>14.2}",
                requests,
                s.calls_alone,
                s.per_request_alone(),
                s.calls_budget,
                s.per_request_budget(),
                s.bound()
            );
        }
    }
}

/// The capacity experiment (`--overload`): load reaching the server without
/// and with the adaptive throttle.
fn overload(options: &Options) {
    let o = sim::Overload {
        capacity: options.capacity,
        offered: options.offered,
        seconds: options.seconds,
        attempts: options.attempts,
        k: options.k,
        burst_s: options.burst_s,
    };
    let (alone, throttled) = sim::average_overload(o, options.runs, options.seed);
    if options.json {
        for (name, m) in [("none", alone), ("adaptive", throttled)] {
            println!(
                concat!(
                    r#"{{"mode": "overload", "throttle": "{}", "capacity_per_s": {}, "offered": {}, "#,
                    r#""seconds": {}, "attempts": {}, "requests": {:.1}, "calls": {:.1}, "#,
                    r#""accepted": {:.1}, "rejected_locally": {:.1}, "load_per_accept": {:.3}}}"#
                ),
                name,
                o.capacity,
                o.offered,
                o.seconds,
                o.attempts,
                m.requests,
                m.calls,
                m.accepted,
                m.rejected_locally,
                m.load_per_accept()
            );
        }
        return;
    }
    println!(
        "server accepts {}/s, offered {}x that for {} s; attempts = {}, exponential 10 ms x2 up to 2 s, full jitter",
        o.capacity, o.offered, o.seconds, o.attempts
    );
    println!(
        "throttle: AdaptiveThrottle::new({}, 120 s); server bucket {} s of capacity; mean of {} runs, seed {}",
        o.k, o.burst_s, options.runs, options.seed
    );
    println!(
        "{:<10} {:>10} {:>12} {:>10} {:>12} {:>14} {:>16}",
        "throttle",
        "requests",
        "server load",
        "accepted",
        "per request",
        "load / accept",
        "rejected locally"
    );
    for (name, m) in [("none", alone), ("adaptive", throttled)] {
        println!(
            "{:<10} {:>10.0} {:>12.0} {:>10.0} {:>12.2} {:>14.2} {:>16.0}",
            name,
            m.requests,
            m.calls,
            m.accepted,
            m.calls / m.requests,
            m.load_per_accept(),
            m.rejected_locally
        );
    }
}
