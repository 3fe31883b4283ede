//! A fleet against a dependency that dies and comes back: local breakers
//! only, against breakers shared through Redis (`backoff_redis`)
//! with a quorum of 1 and of 2.
//!
//! ```text
//! cargo run --release -p backoff-redis --example fleet_sim
//! ```
//!
//! It starts a `redis-server` of its own (on a free port, killed at the
//! end). The P processes of the fleet are simulated in this one process:
//! each is a `RedisStore` of its own (its own id, connections and sync
//! thread) and a caller task that calls every 100 ms at a random phase.
//! Prints a table and writes `docs/charts/fleet.svg`; exits with an error
//! when a target of docs/fleets.md is missed (quorum 2: at most 25 calls
//! reach the dead dependency, one trial per `open_for`, every breaker
//! closed within `open_for` + one calling period + 100 ms of the return,
//! no other process opened by one broken network; with Redis killed, p99.9
//! of the breaker's time per call at most 5 ms and every call its own
//! outcome).

use std::error::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use backoff_redis::{RedisStore, SharedBreaker};
use backoff_redis_testing::RedisServer;
use backoff_runtime::{CircuitBreaker, CircuitState};
use plotters::prelude::*;

const PROCESSES: usize = 50;
const PERIOD: Duration = Duration::from_millis(100);
const THRESHOLD: u32 = 5;
const OPEN_FOR: Duration = Duration::from_millis(1000);
const SYNC_EVERY: Duration = Duration::from_millis(100);
/// The outage: dead from 1 s to 4.05 s (not on a trial's beat), run to 6 s.
const DIES: Duration = Duration::from_millis(1000);
const RETURNS: Duration = Duration::from_millis(4050);
const END: Duration = Duration::from_millis(6000);
/// Chart buckets.
const BUCKET: Duration = Duration::from_millis(50);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Local,
    Shared,
    Quorum,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Local => "local only",
            Mode::Shared => "shared, quorum 1",
            Mode::Quorum => "shared, quorum 2",
        }
    }
}

/// One process's breaker: local, or shared through its own store.
enum Breaker {
    Local(CircuitBreaker),
    Shared(SharedBreaker),
}

impl Breaker {
    fn local(&self) -> &CircuitBreaker {
        match self {
            Breaker::Local(b) => b,
            Breaker::Shared(b) => b.local(),
        }
    }
}

fn fleet(mode: Mode, url: &str, name: &str) -> Vec<Breaker> {
    let breaker = || CircuitBreaker::new(THRESHOLD, 1, OPEN_FOR);
    (0..PROCESSES)
        .map(|_| match mode {
            Mode::Local => Breaker::Local(breaker()),
            Mode::Shared | Mode::Quorum => {
                let store = RedisStore::new(url)
                    .expect("a valid url")
                    .sync_every(SYNC_EVERY);
                let shared = store
                    .breaker(name, breaker())
                    .quorum(if mode == Mode::Quorum { 2 } else { 1 });
                Breaker::Shared(shared)
            }
        })
        .collect()
}

/// A small xorshift, for the phases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[derive(Default)]
struct Outage {
    /// Calls that reached the dead dependency, not as trials.
    leaked: AtomicU64,
    /// Trials that reached it while dead, by `open_for` period since death.
    trials: Vec<AtomicU64>,
    /// Calls reaching the dependency per chart bucket.
    reaching: Vec<AtomicU64>,
    /// When every breaker was open (ms since start), and every one closed
    /// again after the return.
    all_open_ms: AtomicU64,
    all_closed_ms: AtomicU64,
}

struct Result {
    mode: Mode,
    leaked: u64,
    trials: Vec<u64>,
    fleet_open_ms: Option<u64>,
    recovered_ms: Option<u64>,
    reaching: Vec<u64>,
}

/// The outage scenario.
async fn outage(mode: Mode, url: &str, seed: u64) -> Result {
    let name = format!("outage-{}", seed);
    let breakers = Arc::new(fleet(mode, url, &name));
    // Let every store connect and sync.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let periods = (END.as_millis() / OPEN_FOR.as_millis()) as usize + 1;
    let stats = Arc::new(Outage {
        trials: (0..periods).map(|_| AtomicU64::new(0)).collect(),
        reaching: (0..(END.as_millis() / BUCKET.as_millis()) as usize + 1)
            .map(|_| AtomicU64::new(0))
            .collect(),
        ..Outage::default()
    });
    let start = Instant::now();
    let mut rng = Rng(seed);
    let mut tasks = Vec::new();
    for i in 0..PROCESSES {
        let phase = Duration::from_micros(rng.next() % PERIOD.as_micros() as u64);
        let (breakers, stats) = (Arc::clone(&breakers), Arc::clone(&stats));
        tasks.push(tokio::spawn(async move {
            let mut at = tokio::time::Instant::from_std(start) + phase;
            loop {
                tokio::time::sleep_until(at).await;
                at += PERIOD;
                let t = start.elapsed();
                if t >= END {
                    return;
                }
                let dead = t >= DIES && t < RETURNS;
                let Ok(permit) = breakers[i]
                    .local()
                    .acquire_on(backoff_runtime::clock::system)
                else {
                    continue;
                };
                stats.reaching[(t.as_millis() / BUCKET.as_millis()) as usize]
                    .fetch_add(1, Ordering::Relaxed);
                if dead {
                    if permit.is_trial() {
                        let period = ((t - DIES).as_millis() / OPEN_FOR.as_millis()) as usize;
                        stats.trials[period].fetch_add(1, Ordering::Relaxed);
                    } else {
                        stats.leaked.fetch_add(1, Ordering::Relaxed);
                    }
                    permit.failure(Instant::now());
                } else {
                    permit.success();
                }
            }
        }));
    }
    // The monitor: when is every breaker open, and closed again.
    let monitor = {
        let (breakers, stats) = (Arc::clone(&breakers), Arc::clone(&stats));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(1)).await;
                let t = start.elapsed();
                if t >= END {
                    return;
                }
                let ms = t.as_millis() as u64;
                let states = || breakers.iter().map(|b| b.local().state());
                if t > DIES
                    && stats.all_open_ms.load(Ordering::Relaxed) == 0
                    && states().all(|s| s != CircuitState::Closed)
                {
                    stats.all_open_ms.store(ms, Ordering::Relaxed);
                }
                if t > RETURNS
                    && stats.all_closed_ms.load(Ordering::Relaxed) == 0
                    && states().all(|s| s == CircuitState::Closed)
                {
                    stats.all_closed_ms.store(ms, Ordering::Relaxed);
                }
            }
        })
    };
    for task in tasks {
        task.await.expect("a caller panicked");
    }
    monitor.await.expect("the monitor panicked");
    let ms = |a: &AtomicU64, from: Duration| {
        let v = a.load(Ordering::Relaxed);
        (v != 0).then(|| v - from.as_millis() as u64)
    };
    Result {
        mode,
        leaked: stats.leaked.load(Ordering::Relaxed),
        trials: stats
            .trials
            .iter()
            .map(|t| t.load(Ordering::Relaxed))
            .collect(),
        fleet_open_ms: ms(&stats.all_open_ms, DIES),
        recovered_ms: ms(&stats.all_closed_ms, RETURNS),
        reaching: stats
            .reaching
            .iter()
            .map(|t| t.load(Ordering::Relaxed))
            .collect(),
    }
}

/// One process with a broken network (its calls all fail, 5 s), the
/// dependency healthy for the others: how many other processes refuse a
/// call.
async fn broken_network(mode: Mode, url: &str, seed: u64) -> u64 {
    let name = format!("broken-{}", seed);
    let breakers = Arc::new(fleet(mode, url, &name));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused_elsewhere = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut rng = Rng(seed);
    let mut tasks = Vec::new();
    for i in 0..PROCESSES {
        let phase = Duration::from_micros(rng.next() % PERIOD.as_micros() as u64);
        let (breakers, refused) = (Arc::clone(&breakers), Arc::clone(&refused_elsewhere));
        tasks.push(tokio::spawn(async move {
            let mut at = tokio::time::Instant::from_std(start) + phase;
            let mut refused_here = false;
            while start.elapsed() < Duration::from_secs(5) {
                tokio::time::sleep_until(at).await;
                at += PERIOD;
                match breakers[i]
                    .local()
                    .acquire_on(backoff_runtime::clock::system)
                {
                    Ok(permit) if i == 0 => permit.failure(Instant::now()),
                    Ok(permit) => permit.success(),
                    Err(_) if i != 0 && !refused_here => {
                        refused_here = true;
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(_) => {}
                }
            }
        }));
    }
    for task in tasks {
        task.await.expect("a caller panicked");
    }
    refused_elsewhere.load(Ordering::Relaxed)
}

/// Redis killed: the added latency of the breaker (acquire and report) per
/// call, and whether each call returned its own outcome.
async fn redis_down(server: &mut RedisServer, seed: u64) -> (Vec<u64>, u64, Vec<u64>, u64) {
    let breakers = Arc::new(fleet(Mode::Quorum, &server.url(), &format!("down-{seed}")));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let run = |breakers: Arc<Vec<Breaker>>, seed: u64| async move {
        let start = Instant::now();
        let mut rng = Rng(seed);
        let mut tasks = Vec::new();
        for i in 0..PROCESSES {
            let phase = Duration::from_micros(rng.next() % 10_000);
            let breakers = Arc::clone(&breakers);
            tasks.push(tokio::spawn(async move {
                // Every 10 ms here: more samples for the tail.
                let mut at = tokio::time::Instant::from_std(start) + phase;
                let (mut lat, mut wrong, mut calls) = (Vec::new(), 0u64, 0u64);
                let mut n = 0u64;
                while start.elapsed() < Duration::from_secs(3) {
                    tokio::time::sleep_until(at).await;
                    at += Duration::from_millis(10);
                    n += 1;
                    // A failure now and then (1 in 50, never 5 in a row):
                    // the breaker's failure path, which wakes the sync
                    // thread, is timed too; no breaker should open.
                    // (Each process on its own beat: failures spread
                    // over the fleet, not 50 at once.)
                    let ok = !(n + 7 * i as u64).is_multiple_of(50);
                    let t0 = Instant::now();
                    let outcome = match breakers[i]
                        .local()
                        .acquire_on(backoff_runtime::clock::system)
                    {
                        Ok(permit) if ok => {
                            permit.success();
                            Some(true)
                        }
                        Ok(permit) => {
                            permit.failure(Instant::now());
                            Some(false)
                        }
                        Err(_) => None,
                    };
                    lat.push(t0.elapsed().as_nanos() as u64);
                    calls += 1;
                    if outcome != Some(ok) {
                        wrong += 1;
                    }
                }
                (lat, wrong, calls)
            }));
        }
        let (mut lat, mut wrong, mut calls) = (Vec::new(), 0, 0);
        for task in tasks {
            let (l, w, c) = task.await.expect("a caller panicked");
            lat.extend(l);
            wrong += w;
            calls += c;
        }
        lat.sort_unstable();
        (lat, wrong, calls)
    };
    let (up, wrong_up, _) = run(Arc::clone(&breakers), seed).await;
    server.kill();
    let (down, wrong_down, _) = run(Arc::clone(&breakers), seed + 1).await;
    server.restart().expect("redis-server restarts");
    (up, wrong_up, down, wrong_down)
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64 / 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> std::result::Result<(), Box<dyn Error>> {
    let mut server = RedisServer::start()?;
    let url = server.url();
    println!(
        "{PROCESSES} processes, each calling every {} ms at a random phase; breaker: {THRESHOLD} \
         consecutive failures, open_for {} ms; sync_every {} ms",
        PERIOD.as_millis(),
        OPEN_FOR.as_millis(),
        SYNC_EVERY.as_millis()
    );
    println!(
        "dependency dead from {} ms to {} ms (processes simulated as {PROCESSES} RedisStores in this process)\n",
        DIES.as_millis(),
        RETURNS.as_millis()
    );
    let mut results = Vec::new();
    for (k, mode) in [Mode::Local, Mode::Shared, Mode::Quorum]
        .into_iter()
        .enumerate()
    {
        results.push(outage(mode, &url, 0x9E37_79B9 + k as u64).await);
    }
    let mut broken = Vec::new();
    for (k, mode) in [Mode::Local, Mode::Shared, Mode::Quorum]
        .into_iter()
        .enumerate()
    {
        broken.push(broken_network(mode, &url, 0x51_7CC1 + k as u64).await);
    }
    let (up, wrong_up, down, wrong_down) = redis_down(&mut server, 0xD0_D0).await;

    println!(
        "| breakers | calls reaching the dead dependency before the fleet refuses | every breaker open after | trial calls per open_for (while dead) | all closed after the return | other processes opened by one broken network |"
    );
    println!("|---|---|---|---|---|---|");
    for (r, b) in results.iter().zip(&broken) {
        // The periods wholly inside the outage after the first open_for.
        let dead_periods = ((RETURNS - DIES).as_millis() / OPEN_FOR.as_millis()) as usize;
        let trials = &r.trials[1..dead_periods.max(1)];
        println!(
            "| {} | {} | {} | {} | {} | {} of {} |",
            r.mode.name(),
            r.leaked,
            r.fleet_open_ms
                .map_or("never".into(), |ms| format!("{ms} ms")),
            trials
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            r.recovered_ms
                .map_or("not within the run".into(), |ms| format!("{ms} ms")),
            b,
            PROCESSES - 1
        );
    }
    println!(
        "\nrecovery target: one open_for + one sync_every = {} ms",
        (OPEN_FOR + SYNC_EVERY).as_millis()
    );
    println!(
        "\nthe breaker's time per call (acquire and report), shared, quorum 2, {PROCESSES} processes every 10 ms for 3 s:"
    );
    println!("| Redis | calls | p50 | p99 | p99.9 | max | calls without their own outcome |");
    println!("|---|---|---|---|---|---|---|");
    for (what, lat, wrong) in [("up", &up, wrong_up), ("killed", &down, wrong_down)] {
        println!(
            "| {what} | {} | {:.1} µs | {:.1} µs | {:.1} µs | {:.1} µs | {} |",
            lat.len(),
            percentile(lat, 0.5),
            percentile(lat, 0.99),
            percentile(lat, 0.999),
            percentile(lat, 1.0),
            wrong
        );
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/charts/fleet.svg");
    draw(&path, &results)?;
    println!("\nwrote {}", path.display());

    // The targets (docs/fleets.md): exit with an error when one is missed.
    // With `--timing-advisory` (CI, a shared machine), the two wall-clock
    // targets (recovery time, latency with Redis killed) are printed but
    // do not fail the run; the counts always do.
    let advisory = std::env::args().any(|a| a == "--timing-advisory");
    let mut missed = Vec::new();
    let mut timing = Vec::new();
    let quorum = &results[2];
    if quorum.leaked > 25 {
        missed.push(format!(
            "{} calls reached the dead dependency (target: 25)",
            quorum.leaked
        ));
    }
    let dead_periods = ((RETURNS - DIES).as_millis() / OPEN_FOR.as_millis()) as usize;
    if quorum.trials[1..dead_periods].iter().any(|&t| t != 1) {
        missed.push(format!(
            "trials per open_for: {:?} (target: 1)",
            quorum.trials
        ));
    }
    // One open_for, one calling period (the claimant's next call) and two
    // round trips, with 100 ms of slack for a loaded machine.
    let bound = (OPEN_FOR + PERIOD).as_millis() as u64 + 100;
    if quorum.recovered_ms.is_none_or(|ms| ms > bound) {
        timing.push(format!(
            "recovery after {:?} ms (bound: {bound} ms)",
            quorum.recovered_ms
        ));
    }
    if broken[2] != 0 {
        missed.push(format!(
            "one broken network opened {} other processes",
            broken[2]
        ));
    }
    if wrong_down != 0 {
        missed.push(format!(
            "with Redis killed: {wrong_down} calls without their own outcome"
        ));
    }
    if percentile(&down, 0.999) > 5000.0 {
        timing.push(format!(
            "with Redis killed: p99.9 {:.1} µs (target: 5 ms)",
            percentile(&down, 0.999)
        ));
    }
    if advisory {
        for t in &timing {
            println!("timing target missed (advisory on a shared machine): {t}");
        }
    } else {
        missed.extend(timing);
    }
    if !missed.is_empty() {
        return Err(format!("targets missed: {}", missed.join("; ")).into());
    }
    Ok(())
}

fn draw(path: &std::path::Path, results: &[Result]) -> std::result::Result<(), Box<dyn Error>> {
    let root = SVGBackend::new(path, (1000, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let max = results
        .iter()
        .flat_map(|r| r.reaching.iter().copied())
        .max()
        .unwrap_or(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "{PROCESSES} processes calling every 100 ms; the dependency is dead from {:.2} s to {:.2} s",
                DIES.as_secs_f64(),
                RETURNS.as_secs_f64()
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..END.as_secs_f64(), 0.0..max * 1.1)?;
    chart
        .configure_mesh()
        .max_light_lines(1)
        .x_desc("seconds")
        .y_desc(format!(
            "calls reaching the dependency per {} ms",
            BUCKET.as_millis()
        ))
        .draw()?;
    let colours = [
        RGBColor(200, 60, 40),
        RGBColor(60, 120, 200),
        RGBColor(40, 160, 80),
    ];
    for (r, colour) in results.iter().zip(colours) {
        let points = r
            .reaching
            .iter()
            .enumerate()
            .map(|(i, &n)| (i as f64 * BUCKET.as_secs_f64(), n as f64));
        let line = colour.stroke_width(2);
        chart
            .draw_series(LineSeries::new(points, line))?
            .label(r.mode.name())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], line));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
