//! A picture of a schedule per kind of failure: the SPEC's example
//! (transient, throttled and conflict failures on schedules of their own,
//! a server's `Retry-After`), stepped through the runtime's
//! [`Policy::kinds`] for one scripted call whose failures interleave.
//!
//! ```text
//! cargo run -p backoff-workspace-tests --example visualize_kinds -- docs/charts   # writes kinds.svg
//! ```
//!
//! Each retry is a dot at the time its sleep ends (x), on its kind's row
//! (y), labelled with that sleep: each kind counts its own retries, so a
//! row's delays grow by its own schedule whatever the other rows did.

use std::error::Error;
use std::path::PathBuf;
use std::time::Duration;

use backoff_runtime::Kind;
use backoff_runtime::{Decision, Jitter, Policy};
use plotters::prelude::*;

const FONT: &str = "sans-serif";

/// The arms of the SPEC's example, without jitter so the picture is exact.
static KINDS: [Kind; 4] = [
    Kind::new(
        "Failure::Transient",
        Policy::exponential(Duration::from_millis(100))
            .max_delay(Duration::from_secs(5))
            .jitter(Jitter::None)
            .attempts(5),
    ),
    Kind::new(
        "Failure::Throttled",
        Policy::exponential(Duration::from_millis(500))
            .max_delay(Duration::from_secs(30))
            .jitter(Jitter::None)
            .attempts(10),
    ),
    Kind::new("Failure::Conflict", Policy::immediate().attempts(20)),
    Kind::named("Failure::RetryAfter(d)"),
];

static POLICY: Policy = Policy::immediate().unlimited_attempts().kinds(&KINDS);

/// The call's failures, in order: a kind's index, or `after` with its wait.
fn script() -> Vec<Decision> {
    use Decision::{Kind as K, KindAfter};
    vec![
        K(0),
        K(1),
        K(0),
        K(2),
        K(1),
        K(1),
        KindAfter(3, Duration::from_millis(1500)),
        K(0),
        K(1),
        K(2),
        K(0),
    ]
}

/// Each retry: its kind's index, when its sleep ends, and the sleep.
fn steps() -> Vec<(usize, Duration, Duration)> {
    let mut state = POLICY.start();
    let mut now = Duration::ZERO;
    let mut steps = Vec::new();
    for decision in script() {
        let index = match decision {
            Decision::Kind(i) | Decision::KindAfter(i, _) => usize::from(i),
            _ => unreachable!("the script names kinds"),
        };
        let Some(delay) = state.next_delay_for(decision) else {
            break;
        };
        now += delay;
        steps.push((index, now, delay));
    }
    steps
}

fn colour(kind: usize) -> RGBColor {
    [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
    ][kind % 4]
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("docs/charts"), PathBuf::from);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("kinds.svg");
    let steps = steps();
    let end = steps.last().map_or(1.0, |s| s.1.as_secs_f64()) * 1.08;

    let root = SVGBackend::new(&path, (960, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "a schedule per kind: each kind counts its own retries",
            (FONT, 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(190)
        .build_cartesian_2d(0.0..end, -0.5..(KINDS.len() as f64 - 0.5))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(KINDS.len())
        .y_label_formatter(&|y| {
            let i = y.round();
            if (y - i).abs() < 1e-9 && i >= 0.0 {
                KINDS
                    .get(i as usize)
                    .map_or(String::new(), |k| k.name().to_owned())
            } else {
                String::new()
            }
        })
        .x_desc("time since the first failure (s)")
        .draw()?;
    for (kind, at, delay) in &steps {
        let point = (at.as_secs_f64(), *kind as f64);
        chart.draw_series([Circle::new(point, 6, colour(*kind).filled())])?;
        chart.draw_series([Text::new(
            format!("{} ms", delay.as_millis()),
            (point.0, point.1 + 0.22),
            (FONT, 13),
        )])?;
    }
    root.present()?;
    println!("wrote {}", path.display());
    Ok(())
}
