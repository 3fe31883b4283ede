//! How evenly a herd of failed jobs retries, and how much each job's waits
//! deviate: Sidekiq's schedule, "buckets" and `Jitter::Spread`, measured as
//! `docs/job-systems.md` defines it.
//!
//! ```text
//! cargo run --release -p backoff-workspace-tests --example job_spread
//! ```
//!
//! Every delay comes from [`Policy::delay_for`] with the job's id as the
//! key (sequential ids: trial `t` holds jobs `100·t … 100·t + 99`), so the
//! figures are the same on every run. The program prints one table per
//! set-up, checks the targets of issue #28, and exits with an error when
//! one is missed.

use std::error::Error;
use std::process::ExitCode;

use backoff_runtime::strategy::{Buckets, Sidekiq};
use backoff_runtime::{Jitter, JitterRng, Policy, Strategy};

/// Time, in seconds, of every retry of a set of jobs.
#[derive(Debug, Clone)]
pub(crate) struct Herd {
    /// When each job failed first.
    pub(crate) arrivals: Vec<f64>,
    /// `times[job][k]`: when job `job` makes retry `k + 1`.
    pub(crate) times: Vec<Vec<f64>>,
}

impl Herd {
    /// Jobs with the ids `keys`, first failing at `arrivals`, each retrying
    /// `retries` times on `policy`'s [`Policy::delay_for`].
    pub(crate) fn run<S: Strategy>(
        policy: &Policy<S>,
        keys: impl Iterator<Item = u64>,
        arrivals: Vec<f64>,
        retries: u32,
    ) -> Herd {
        let times = keys
            .zip(&arrivals)
            .map(|(key, &arrival)| {
                let mut at = arrival;
                (1..=retries)
                    .map(|k| {
                        let delay = policy
                            .delay_for(k, key)
                            .expect("the policy allows every retry measured");
                        at += delay.as_secs_f64();
                        at
                    })
                    .collect()
            })
            .collect();
        Herd { arrivals, times }
    }

    /// The wait before each retry of `job`.
    fn waits(&self, job: usize) -> impl Iterator<Item = f64> + '_ {
        let mut previous = self.arrivals[job];
        self.times[job].iter().map(move |&t| {
            let wait = t - previous;
            previous = t;
            wait
        })
    }
}

/// The figures of one strategy on one set-up (see `docs/job-systems.md`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Figures {
    /// Share of bins holding under 5 % of the mean count (mean over trials).
    pub(crate) idle: f64,
    /// Standard deviation / mean of the bin counts (mean over trials).
    pub(crate) load_cv: f64,
    /// The longest time without a retry, in rounds (the most of any trial).
    pub(crate) longest_gap: f64,
    /// The coefficient of variation of the wait across jobs, at each retry
    /// count: the largest.
    pub(crate) wait_cv_max: f64,
    /// ... and the mean over the retry counts.
    pub(crate) wait_cv_mean: f64,
    /// Share of waits shorter than the same job's previous one.
    pub(crate) shrinking: f64,
    /// Median time from a job's first failure to its last retry, seconds.
    pub(crate) completion_p50: f64,
    /// 95th percentile of the same.
    pub(crate) completion_p95: f64,
}

/// Bins per round.
pub(crate) const BINS_PER_ROUND: usize = 10;

/// Every retry of `herd`, in rounds: time re-measured in units of the local
/// mean spacing between retries.
///
/// Each job's progress `r(t)` counts its retries made by time `t`, rising
/// linearly from `k` at retry `k` to `k + 1` at retry `k + 1` (zero until
/// it first fails, `retries` after its last); the herd's time in rounds is
/// the mean of its jobs' progress. It advances by one round while each job
/// retries once on average, at the rate of the retries' own local spacing,
/// whatever the schedule's growth and however the failures arrived, so
/// that an even herd puts the same count in every bin, and a herd that
/// retries in clumps leaves bins idle.
pub(crate) fn rounds(herd: &Herd) -> Vec<f64> {
    let jobs = herd.times.len() as f64;
    // (time, change of the summed slope, jump, is a retry)
    let mut changes: Vec<(f64, f64, f64, bool)> = Vec::new();
    for (job, times) in herd.times.iter().enumerate() {
        let mut previous = herd.arrivals[job];
        for &t in times {
            let wait = t - previous;
            if wait > 0.0 {
                changes.push((previous, 1.0 / wait, 0.0, false));
                changes.push((t, -1.0 / wait, 0.0, true));
            } else {
                changes.push((t, 0.0, 1.0, true));
            }
            previous = t;
        }
    }
    changes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut u, mut slope, mut now) = (0.0, 0.0, f64::NEG_INFINITY);
    let mut at = Vec::with_capacity(changes.len() / 2);
    for (t, dslope, jump, retry) in changes {
        if now.is_finite() {
            u += slope * (t - now) / jobs;
        }
        now = t;
        slope += dslope;
        u += jump / jobs;
        if retry {
            at.push(u);
        }
    }
    at
}

/// The figures of a strategy over `trials`, each retrying `retries` times.
pub(crate) fn measure(trials: &[Herd], retries: usize) -> Figures {
    let jobs: usize = trials.iter().map(|h| h.times.len()).sum();
    // Half a round of ramp-up and of ramp-down dropped: the k-th retries
    // gather around round k, from round ½ to round `retries`.
    let (from, to) = (1.0, retries as f64 - 0.5);
    let bins = ((to - from) * BINS_PER_ROUND as f64).round() as usize;
    let mut figures = Figures::default();
    for herd in trials {
        let mut counts = vec![0.0f64; bins];
        let mut at: Vec<f64> = rounds(herd)
            .into_iter()
            .filter(|u| (from..to).contains(u))
            .collect();
        for u in &at {
            counts[(((u - from) * BINS_PER_ROUND as f64) as usize).min(bins - 1)] += 1.0;
        }
        let mean_count = counts.iter().sum::<f64>() / bins as f64;
        let sd =
            (counts.iter().map(|c| (c - mean_count).powi(2)).sum::<f64>() / bins as f64).sqrt();
        figures.idle +=
            counts.iter().filter(|&&c| c < 0.05 * mean_count).count() as f64 / bins as f64;
        figures.load_cv += sd / mean_count;
        at.push(from);
        at.push(to);
        at.sort_by(f64::total_cmp);
        let gap = at.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
        figures.longest_gap = figures.longest_gap.max(gap);
    }
    figures.idle /= trials.len() as f64;
    figures.load_cv /= trials.len() as f64;
    // The waits, by retry count, across every job of every trial.
    let mut by_retry = vec![Vec::with_capacity(jobs); retries];
    let (mut shrinking, mut pairs) = (0usize, 0usize);
    let mut completion = Vec::with_capacity(jobs);
    for herd in trials {
        for job in 0..herd.times.len() {
            let waits: Vec<f64> = herd.waits(job).collect();
            for (k, w) in waits.iter().enumerate() {
                by_retry[k].push(*w);
            }
            shrinking += waits.windows(2).filter(|w| w[1] < w[0]).count();
            pairs += waits.len() - 1;
            completion.push(herd.times[job][retries - 1] - herd.arrivals[job]);
        }
    }
    let cvs: Vec<f64> = by_retry
        .iter()
        .map(|w| {
            let m = w.iter().sum::<f64>() / w.len() as f64;
            let var = w.iter().map(|x| (x - m).powi(2)).sum::<f64>() / w.len() as f64;
            if m > 0.0 { var.sqrt() / m } else { 0.0 }
        })
        .collect();
    figures.wait_cv_max = cvs.iter().copied().fold(0.0, f64::max);
    figures.wait_cv_mean = cvs.iter().sum::<f64>() / cvs.len() as f64;
    figures.shrinking = shrinking as f64 / pairs as f64;
    completion.sort_by(f64::total_cmp);
    let quantile = |q: f64| completion[((completion.len() - 1) as f64 * q).round() as usize];
    figures.completion_p50 = quantile(0.5);
    figures.completion_p95 = quantile(0.95);
    figures
}

/// The essay's set-up: `jobs` jobs failing at once, `retries` retries,
/// `trials` trials of sequential ids.
pub(crate) fn at_once<S: Strategy>(
    policy: &Policy<S>,
    jobs: u64,
    retries: u32,
    trials: u64,
) -> Vec<Herd> {
    (0..trials)
        .map(|t| {
            Herd::run(
                policy,
                t * jobs..(t + 1) * jobs,
                vec![0.0; jobs as usize],
                retries,
            )
        })
        .collect()
}

/// `jobs` jobs whose first failures arrive uniformly at random over
/// `window` seconds (seeded per trial), sequential ids.
pub(crate) fn arriving<S: Strategy>(
    policy: &Policy<S>,
    jobs: u64,
    window: f64,
    retries: u32,
    trials: u64,
) -> Vec<Herd> {
    (0..trials)
        .map(|t| {
            let mut rng = JitterRng::from_seed(0xA11 + t);
            let arrivals = (0..jobs).map(|_| rng.unit_f64() * window).collect();
            Herd::run(policy, t * jobs..(t + 1) * jobs, arrivals, retries)
        })
        .collect()
}

/// Retries per job, as in the essay's charts of Sidekiq and buckets.
pub(crate) const RETRIES: u32 = 25;
/// Jobs failing at once.
pub(crate) const JOBS: u64 = 100;
/// Trials of the at-once set-up.
pub(crate) const TRIALS: u64 = 200;

fn row(name: &str, f: &Figures, reference: &Figures) -> String {
    format!(
        "| {name} | {:.1} % | {:.2} | {:.3} | {:.2} / {:.3} | {:.1} % | {:.0} s ({:.3}×) | {:.0} s ({:.3}×) |",
        100.0 * f.idle,
        f.load_cv,
        f.longest_gap,
        f.wait_cv_max,
        f.wait_cv_mean,
        100.0 * f.shrinking,
        f.completion_p50,
        f.completion_p50 / reference.completion_p50,
        f.completion_p95,
        f.completion_p95 / reference.completion_p95,
    )
}

const HEADER: &str = "| strategy | idle bins | load CV | longest gap (rounds) | wait CV max / mean | waits shorter than the previous | median completion | p95 completion |\n|---|---|---|---|---|---|---|---|";

/// One target: its name, the measured value, and whether it is met.
struct Check {
    what: String,
    value: f64,
    limit: f64,
}

impl Check {
    fn at_most(what: impl Into<String>, value: f64, limit: f64) -> Check {
        Check {
            what: what.into(),
            value,
            limit,
        }
    }

    fn met(&self) -> bool {
        self.value <= self.limit
    }
}

/// The evenness targets every spread row must meet.
fn evenness(name: &str, f: &Figures, checks: &mut Vec<Check>) {
    checks.push(Check::at_most(format!("{name}: idle bins"), f.idle, 0.005));
    checks.push(Check::at_most(format!("{name}: load CV"), f.load_cv, 0.35));
    checks.push(Check::at_most(
        format!("{name}: longest gap"),
        f.longest_gap,
        0.08,
    ));
    checks.push(Check::at_most(
        format!("{name}: waits shorter than the previous"),
        f.shrinking,
        0.005,
    ));
}

fn main() -> Result<ExitCode, Box<dyn Error>> {
    // Sidekiq's and buckets' schedules as the essay draws them, and spread
    // on each envelope.
    let sidekiq = Policy::from_strategy(Sidekiq::new()).attempts(RETRIES + 1);
    let buckets = Policy::from_strategy(Buckets::new()).attempts(RETRIES + 1);
    let spread_sidekiq = sidekiq.jitter(Jitter::Spread);
    let spread_buckets = buckets.jitter(Jitter::Spread);
    let retries = RETRIES as usize;
    let mut checks = Vec::new();

    println!(
        "## {JOBS} jobs failing at once, {RETRIES} retries, {TRIALS} trials (ids 0 … {})\n",
        JOBS * TRIALS - 1
    );
    println!("{HEADER}");
    let s = measure(&at_once(&sidekiq, JOBS, RETRIES, TRIALS), retries);
    let ss = measure(&at_once(&spread_sidekiq, JOBS, RETRIES, TRIALS), retries);
    let b = measure(&at_once(&buckets, JOBS, RETRIES, TRIALS), retries);
    let bs = measure(&at_once(&spread_buckets, JOBS, RETRIES, TRIALS), retries);
    println!("{}", row("Sidekiq", &s, &s));
    println!("{}", row("spread on Sidekiq's envelope", &ss, &s));
    println!("{}", row("buckets", &b, &b));
    println!("{}", row("spread on buckets' envelope", &bs, &b));
    println!("\n(completion ratios against the strategy whose envelope it is)\n");

    evenness("spread/Sidekiq", &ss, &mut checks);
    checks.push(Check::at_most(
        "spread/Sidekiq: wait CV max",
        ss.wait_cv_max,
        0.35,
    ));
    checks.push(Check::at_most(
        "spread/Sidekiq: wait CV mean",
        ss.wait_cv_mean,
        0.13,
    ));
    checks.push(Check::at_most(
        "spread/Sidekiq: median completion off Sidekiq's",
        (ss.completion_p50 / s.completion_p50 - 1.0).abs(),
        0.03,
    ));
    checks.push(Check::at_most(
        "spread/Sidekiq: p95 completion / Sidekiq's",
        ss.completion_p95 / s.completion_p95,
        1.12,
    ));
    evenness("spread/buckets", &bs, &mut checks);
    checks.push(Check::at_most(
        "spread/buckets: wait CV max",
        bs.wait_cv_max,
        0.45,
    ));
    checks.push(Check::at_most(
        "spread/buckets: wait CV mean",
        bs.wait_cv_mean,
        0.12,
    ));
    checks.push(Check::at_most(
        "spread/buckets: p95 completion / buckets'",
        bs.completion_p95 / b.completion_p95,
        1.10,
    ));

    const MANY: u64 = 1000;
    const WINDOW: f64 = 600.0;
    const MANY_TRIALS: u64 = 20;
    println!(
        "## {MANY} jobs whose failures arrive over 10 minutes, {RETRIES} retries, {MANY_TRIALS} trials\n"
    );
    println!("{HEADER}");
    let s = measure(
        &arriving(&sidekiq, MANY, WINDOW, RETRIES, MANY_TRIALS),
        retries,
    );
    let ss = measure(
        &arriving(&spread_sidekiq, MANY, WINDOW, RETRIES, MANY_TRIALS),
        retries,
    );
    let b = measure(
        &arriving(&buckets, MANY, WINDOW, RETRIES, MANY_TRIALS),
        retries,
    );
    let bs = measure(
        &arriving(&spread_buckets, MANY, WINDOW, RETRIES, MANY_TRIALS),
        retries,
    );
    println!("{}", row("Sidekiq", &s, &s));
    println!("{}", row("spread on Sidekiq's envelope", &ss, &s));
    println!("{}", row("buckets", &b, &b));
    println!("{}", row("spread on buckets' envelope", &bs, &b));
    println!();
    for (name, f) in [
        ("spread/Sidekiq, 1,000 over 10 min", &ss),
        ("spread/buckets, 1,000 over 10 min", &bs),
    ] {
        checks.push(Check::at_most(format!("{name}: idle bins"), f.idle, 0.005));
        checks.push(Check::at_most(format!("{name}: load CV"), f.load_cv, 0.15));
    }

    println!("## Targets\n");
    let mut missed = 0;
    for c in &checks {
        let mark = if c.met() { "met" } else { "MISSED" };
        println!("- {}: {:.4} (at most {}) {mark}", c.what, c.value, c.limit);
        missed += usize::from(!c.met());
    }
    if missed > 0 {
        eprintln!("error: {missed} target(s) missed");
        return Ok(ExitCode::FAILURE);
    }
    println!("\nall {} targets met", checks.len());
    Ok(ExitCode::SUCCESS)
}
