//! Pictures of backoff: SVG charts of retry schedules and of the thundering
//! herd, drawn with `plotters`.
//!
//! ```text
//! cargo run --release -p backoff-workspace-tests --example visualize -- docs/charts             # the README's charts
//! cargo run --release -p backoff-workspace-tests --example visualize -- docs/charts schedules   # the retry charts only
//! ```
//!
//! # Retry schedules
//!
//! After the essay "Visualization of backoff functions": 100 jobs fail at
//! the same instant and each retries 10 times (every retry fails). Each retry
//! is a dot at the time it happens (x, time since the failure) on its job's
//! row (y), coloured by retry count. Every schedule comes from a
//! [`Policy`] of `backoff-runtime`, with each job's jitter seeded apart:
//!
//! | file | policy |
//! |---|---|
//! | `retries-constant.svg` | `constant(5 min)`, no jitter (the essay's) |
//! | `retries-exponential.svg` | the essay's `3 + 2ⁿ` min (n from 0), no jitter: [`Sum`] of `constant(3 min)` and `exponential(1 min)` |
//! | `retries-exponential-full-jitter.svg` | the same with full jitter |
//! | `retries-chain.svg` | [`Chain`]: `exponential(1 min)` for 3 retries, then `constant(30 min)`, full jitter |
//! | `retries-sidekiq.svg` | [`Sidekiq`]: `n⁴ + 15 + rand · 30 · (n + 1)` s |
//! | `retries-buckets.svg` | [`Buckets`]: uniform(`n³`, `(n + 2)³`) s |
//! | `retries-decorrelated.svg` | `decorrelated(1 min)` |
//! | `retries-sidekiq-spread.svg` | [`Jitter::Spread`] on Sidekiq's envelope, job id as the key |
//! | `retries-buckets-spread.svg` | [`Jitter::Spread`] on buckets' envelope, job id as the key |
//!
//! The pure functions retry the whole herd in lockstep (one vertical line of
//! dots per retry); jitter spreads it out. Spread puts each job at the same
//! fraction of every window, its id's phase: each retry's dots form a
//! diagonal that fills its window, and the windows meet without gaps.
//!
//! # Evenness against wait deviation
//!
//! `evenness.svg`: every strategy above, with and without spread, on the
//! set-up of the `job_spread` example (100 jobs failing at once, 25 retries,
//! sequential ids, 50 trials), measured as `docs/job-systems.md` defines:
//! the load's coefficient of variation over time (x, log scale: lower is
//! more even) against the mean coefficient of variation of the waits at
//! each retry (y: lower keeps each job's waits closer to the schedule).
//!
//! # The herd
//!
//! `herd.svg`: the simulation of the `herd` example (the AWS "Exponential
//! Backoff And Jitter" experiment, whose code this file includes rather than
//! repeats), for 10 to 200 clients: total writes (calls) and completion time
//! against the number of clients, one line per strategy, mean of 20 runs.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Duration;

use backoff_runtime::strategy::{Buckets, Chain, Constant, Exponential, Sidekiq, Sum};
use backoff_runtime::{Jitter, Policy, Strategy};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

// The measurements of examples/job_spread.rs, compiled in here as a module
// (its `main` is unused in this program).
#[path = "job_spread.rs"]
#[allow(dead_code)]
mod job_spread;

// The simulation of examples/herd.rs, compiled in here as a module. Its
// command-line front end (`main`, argument parsing) is unused in this program.
#[path = "herd.rs"]
#[allow(dead_code)]
mod herd;

use herd::sim;

/// Jobs per retry chart.
const JOBS: u32 = 100;
/// Retries per job.
const RETRIES: u32 = 10;
/// Seed of every random choice.
const SEED: u64 = 1;
/// Runs averaged per point of the herd chart.
const HERD_RUNS: u32 = 20;
const FONT: &str = "sans-serif";

/// One retry chart: a name, a title and every job's retry times.
struct Schedule {
    file: &'static str,
    title: &'static str,
    /// `times[job][k]`: when job `job` makes retry `k + 1`.
    times: Vec<Vec<Duration>>,
}

impl Schedule {
    /// Runs `policy` for every job, each with its own seed.
    fn of<S: Strategy + Copy>(file: &'static str, title: &'static str, policy: Policy<S>) -> Self {
        let times = (0..JOBS)
            .map(|job| {
                let policy = policy
                    .attempts(RETRIES + 1)
                    .seed(sim::derive_seed(SEED, u64::from(job)));
                policy
                    .delays()
                    .scan(Duration::ZERO, |at, delay| {
                        *at += delay;
                        Some(*at)
                    })
                    .collect()
            })
            .collect();
        Schedule { file, title, times }
    }

    /// Runs `policy`'s [`Policy::delay_for`] for every job, its id the key.
    fn keyed<S: Strategy>(file: &'static str, title: &'static str, policy: Policy<S>) -> Self {
        let policy = policy.attempts(RETRIES + 1);
        let times = (0..u64::from(JOBS))
            .map(|job| {
                (1..=RETRIES)
                    .scan(Duration::ZERO, |at, k| {
                        *at += policy.delay_for(k, job)?;
                        Some(*at)
                    })
                    .collect()
            })
            .collect();
        Schedule { file, title, times }
    }
}

fn schedules() -> Vec<Schedule> {
    let minute = Duration::from_secs(60);
    let long = Duration::from_secs(12 * 3600);
    // The essay's function, exactly: 3 + 2ⁿ minutes with n from 0, as its
    // Sidekiq and buckets functions count (4, 5, 7, 11, 19 …), what the
    // attribute writes `sum(constant("3m"), exponential(base = "1m", max = "12h"))`.
    let essay = Policy::from_strategy(Sum::new(
        Constant::new(3 * minute).max_delay(3 * minute),
        Exponential::new(minute).max_delay(long),
    ));
    // `chain(exponential(base = "1m", times = 3), constant("30m"))`.
    let chain = Policy::from_strategy(Chain::new(
        Exponential::new(minute).max_delay(long),
        3,
        Constant::new(30 * minute).max_delay(30 * minute),
    ));
    vec![
        Schedule::of(
            "retries-constant.svg",
            "constant: 5 min",
            Policy::constant(5 * minute).jitter(Jitter::None),
        ),
        Schedule::of(
            "retries-exponential.svg",
            "the essay's 3 + 2^n min: sum(constant(3 min), exponential(1 min)), no jitter",
            essay.jitter(Jitter::None),
        ),
        Schedule::of(
            "retries-exponential-full-jitter.svg",
            "uniform(0, 3 + 2^n min), full jitter",
            essay.jitter(Jitter::Full),
        ),
        Schedule::of(
            "retries-chain.svg",
            "chain: 1, 2, 4 min, then 30 min, full jitter",
            chain.jitter(Jitter::Full),
        ),
        Schedule::of(
            "retries-sidekiq.svg",
            "sidekiq: n⁴ + 15 + rand · 30 · (n + 1) s, n = k − 1",
            Policy::from_strategy(Sidekiq::new()),
        ),
        Schedule::of(
            "retries-buckets.svg",
            "buckets: uniform(n³, (n + 2)³) s, n = k − 1",
            Policy::from_strategy(Buckets::new()),
        ),
        Schedule::of(
            "retries-decorrelated.svg",
            "decorrelated: min(12 h, uniform(1 min, 3 · previous))",
            Policy::decorrelated(minute).max_delay(long),
        ),
        Schedule::keyed(
            "retries-sidekiq-spread.svg",
            "spread on Sidekiq's envelope: n⁴ + 15 + 15 · (n + 1) s, the job id's phase",
            Policy::from_strategy(Sidekiq::new()).jitter(Jitter::Spread),
        ),
        Schedule::keyed(
            "retries-buckets-spread.svg",
            "spread on buckets' envelope: (n³ + (n + 2)³) / 2 s, the job id's phase",
            Policy::from_strategy(Buckets::new()).jitter(Jitter::Spread),
        ),
    ]
}

/// The colour of retry `k` (1-based): from red through green to violet.
fn retry_colour(k: u32) -> HSLColor {
    HSLColor(0.8 * f64::from(k - 1) / f64::from(RETRIES - 1), 0.75, 0.45)
}

/// Draws one retry chart, with its colour key on the right.
fn draw_schedule(path: &Path, schedule: &Schedule) -> Result<(), Box<dyn Error>> {
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let (plot, key) = root.split_horizontally(860);

    let last = schedule
        .times
        .iter()
        .flatten()
        .max()
        .copied()
        .unwrap_or(Duration::from_secs(1));
    // Minutes up to three hours, hours beyond.
    let (unit, unit_name) = if last <= Duration::from_secs(3 * 3600) {
        (60.0, "minutes")
    } else {
        (3600.0, "hours")
    };
    let x_max = last.as_secs_f64() / unit * 1.03;

    let mut chart = ChartBuilder::on(&plot)
        .caption(schedule.title, (FONT, 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..x_max, -1.0..f64::from(JOBS))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .max_light_lines(1)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .x_desc(format!("time since the failure ({unit_name})"))
        .y_desc("job")
        .draw()?;
    for k in 1..=RETRIES {
        let colour = retry_colour(k).filled();
        let dots = schedule.times.iter().zip(0..).filter_map(|(times, job)| {
            let at = times.get(k as usize - 1)?;
            Some(Circle::new(
                (at.as_secs_f64() / unit, f64::from(job)),
                2,
                colour,
            ))
        });
        chart.draw_series(dots)?;
    }

    key.draw(&Text::new("retry", (8, 50), (FONT, 15)))?;
    for k in 1..=RETRIES {
        let y = 60 + 22 * k as i32;
        key.draw(&Circle::new((16, y), 5, retry_colour(k).filled()))?;
        key.draw(&Text::new(k.to_string(), (28, y - 8), (FONT, 14)))?;
    }
    root.present()?;
    Ok(())
}

/// An axis label: at most two decimals, without trailing zeros.
fn tick(value: &f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A strategy's line colour in the herd chart.
fn strategy_colour(strategy: sim::Strategy) -> RGBColor {
    match strategy {
        sim::Strategy::None => RGBColor(214, 39, 40),
        sim::Strategy::Exponential => RGBColor(255, 127, 14),
        sim::Strategy::Full => RGBColor(44, 160, 44),
        sim::Strategy::Equal => RGBColor(31, 119, 180),
        sim::Strategy::Decorrelated => RGBColor(148, 103, 189),
    }
}

/// The herd simulation for 10, 20 … 200 clients: one row per strategy.
fn herd_results() -> Vec<Vec<sim::Summary>> {
    // One thread per strategy; each result depends only on its seeds.
    std::thread::scope(|scope| {
        let workers: Vec<_> = sim::Strategy::ALL
            .into_iter()
            .map(|strategy| {
                scope.spawn(move || {
                    (1..=20)
                        .map(|i| sim::average(strategy, 10 * i, HERD_RUNS, SEED))
                        .collect()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a simulation thread panicked"))
            .collect()
    })
}

/// Draws calls (linear) and completion time (logarithmic) against clients.
fn draw_herd(path: &Path, results: &[Vec<sim::Summary>]) -> Result<(), Box<dyn Error>> {
    let root = SVGBackend::new(path, (1200, 540)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        &format!("OCC under contention: N clients update one record (mean of {HERD_RUNS} runs)"),
        (FONT, 20),
    )?;
    let (left, right) = root.split_horizontally(600);
    let all = || results.iter().flatten();
    let x_range = 0.0..210.0;

    let max_calls = all().map(|s| s.calls).fold(0.0, f64::max);
    let mut calls = ChartBuilder::on(&left)
        .caption("calls (writes, failed or not)", (FONT, 17))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range.clone(), 0.0..max_calls * 1.05)?;
    calls
        .configure_mesh()
        .max_light_lines(1)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .x_desc("clients")
        .y_desc("calls")
        .draw()?;

    let (lo, hi) = all().fold((f64::INFINITY, 0.0f64), |(lo, hi), s| {
        (lo.min(s.completion_s), hi.max(s.completion_s))
    });
    let mut time = ChartBuilder::on(&right)
        .caption("completion time (log scale)", (FONT, 17))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range, (lo * 0.8..hi * 1.25).log_scale())?;
    time.configure_mesh()
        .max_light_lines(1)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .x_desc("clients")
        .y_desc("seconds")
        .draw()?;

    plot_lines(
        &mut calls,
        results,
        |s| s.calls,
        SeriesLabelPosition::UpperLeft,
    )?;
    plot_lines(
        &mut time,
        results,
        |s| s.completion_s,
        SeriesLabelPosition::LowerRight,
    )?;
    root.present()?;
    Ok(())
}

/// One line (with a dot per measurement) per strategy, and the legend.
fn plot_lines<'a, DB, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>,
    results: &[Vec<sim::Summary>],
    value: fn(&sim::Summary) -> f64,
    legend: SeriesLabelPosition,
) -> Result<(), Box<dyn Error>>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64>,
{
    for row in results {
        let colour = strategy_colour(row[0].strategy);
        let points = || row.iter().map(|s| (s.clients as f64, value(s)));
        let line = colour.stroke_width(2);
        chart
            .draw_series(LineSeries::new(points(), line))?
            .label(row[0].strategy.name())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], line));
        chart.draw_series(points().map(|p| Circle::new(p, 3, colour.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(legend)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 14))
        .draw()?;
    Ok(())
}

/// One point of the evenness chart: a name, whether it is spread, and its
/// figures.
struct Evenness {
    name: &'static str,
    spread: bool,
    figures: job_spread::Figures,
}

/// Trials per point of the evenness chart.
const EVENNESS_TRIALS: u64 = 50;

/// Every strategy of the retry charts, with and without spread, measured
/// as the `job_spread` example measures.
fn evenness_results() -> Vec<Evenness> {
    let minute = Duration::from_secs(60);
    let long = Duration::from_secs(12 * 3600);
    fn measure<S: Strategy>(policy: Policy<S>) -> job_spread::Figures {
        let policy = policy.attempts(job_spread::RETRIES + 1);
        let herds = job_spread::at_once(
            &policy,
            job_spread::JOBS,
            job_spread::RETRIES,
            EVENNESS_TRIALS,
        );
        job_spread::measure(&herds, job_spread::RETRIES as usize)
    }
    let exponential = Policy::exponential(minute).factor(2.0).max_delay(long);
    let point = |name, spread, figures| Evenness {
        name,
        spread,
        figures,
    };
    vec![
        point(
            "constant",
            false,
            measure(Policy::constant(5 * minute).jitter(Jitter::None)),
        ),
        point(
            "constant",
            true,
            measure(Policy::constant(5 * minute).jitter(Jitter::Spread)),
        ),
        point(
            "exponential",
            false,
            measure(exponential.jitter(Jitter::None)),
        ),
        point(
            "exponential, full jitter",
            false,
            measure(exponential.jitter(Jitter::Full)),
        ),
        point(
            "exponential, equal jitter",
            false,
            measure(exponential.jitter(Jitter::Equal)),
        ),
        point(
            "exponential",
            true,
            measure(exponential.jitter(Jitter::Spread)),
        ),
        point(
            "decorrelated",
            false,
            measure(Policy::decorrelated(minute).max_delay(long)),
        ),
        point(
            "decorrelated",
            true,
            measure(
                Policy::decorrelated(minute)
                    .max_delay(long)
                    .jitter(Jitter::Spread),
            ),
        ),
        point(
            "Sidekiq",
            false,
            measure(Policy::from_strategy(Sidekiq::new())),
        ),
        point(
            "Sidekiq",
            true,
            measure(Policy::from_strategy(Sidekiq::new()).jitter(Jitter::Spread)),
        ),
        point(
            "buckets",
            false,
            measure(Policy::from_strategy(Buckets::new())),
        ),
        point(
            "buckets",
            true,
            measure(Policy::from_strategy(Buckets::new()).jitter(Jitter::Spread)),
        ),
    ]
}

/// Load CV (log scale) against the mean wait CV, one labelled dot per
/// strategy: spread's in blue, the others in red.
fn draw_evenness(path: &Path, points: &[Evenness]) -> Result<(), Box<dyn Error>> {
    let root = SVGBackend::new(path, (960, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let max_y = points
        .iter()
        .map(|p| p.figures.wait_cv_mean)
        .fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "evenness against wait deviation: 100 jobs failing at once, 25 retries",
            (FONT, 20),
        )
        .margin(16)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((0.05f64..6.0).log_scale(), -0.02..max_y * 1.15 + 0.02)?;
    chart
        .configure_mesh()
        .max_light_lines(1)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .x_desc("load CV over time (sd / mean of retries per tenth of a round; log scale)")
        .y_desc("wait CV, mean over retries")
        .draw()?;
    // The floor of independent random phases: Poisson counts of 10 a bin.
    let floor = 1.0 / 10f64.sqrt();
    chart.draw_series(LineSeries::new(
        [(floor, -0.02), (floor, max_y * 1.15 + 0.02)],
        BLACK.mix(0.4).stroke_width(1),
    ))?;
    chart.draw_series([Text::new(
        "Poisson floor",
        (floor * 1.03, max_y * 1.1),
        (FONT, 13),
    )])?;
    for p in points {
        let colour = if p.spread {
            RGBColor(31, 119, 180)
        } else {
            RGBColor(214, 39, 40)
        };
        let at = (p.figures.load_cv.max(0.05), p.figures.wait_cv_mean);
        chart.draw_series([Circle::new(at, 5, colour.filled())])?;
        let label = if p.spread {
            format!("{}, spread", p.name)
        } else {
            p.name.to_owned()
        };
        chart.draw_series([Text::new(
            label,
            (at.0 * 1.06, at.1 + 0.004),
            (FONT, 13).into_font().color(&colour),
        )])?;
    }
    root.present()?;
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args_os().skip(1);
    let dir = PathBuf::from(args.next().unwrap_or_else(|| "docs/charts".into()));
    let only_schedules = match args.next() {
        None => false,
        Some(arg) if arg == "schedules" && args.next().is_none() => true,
        Some(_) => {
            return Err("usage: visualize [OUT-DIR [schedules]] (default: docs/charts)".into());
        }
    };
    std::fs::create_dir_all(&dir)?;

    for schedule in schedules() {
        let path = dir.join(schedule.file);
        draw_schedule(&path, &schedule)?;
        println!("wrote {}", path.display());
    }
    if only_schedules {
        return Ok(());
    }
    let path = dir.join("herd.svg");
    draw_herd(&path, &herd_results())?;
    println!("wrote {}", path.display());
    let points = evenness_results();
    for p in &points {
        let f = &p.figures;
        println!(
            "{:<28} spread {:<5} idle {:5.1} %  load CV {:5.2}  wait CV mean {:.3}",
            p.name,
            p.spread,
            100.0 * f.idle,
            f.load_cv,
            f.wait_cv_mean
        );
    }
    let path = dir.join("evenness.svg");
    draw_evenness(&path, &points)?;
    println!("wrote {}", path.display());
    Ok(())
}
