//! `Policy::parse`: the time to read a schedule from text into a
//! `DynPolicy` (lexing, parsing, the attribute's checks, building the
//! strategy), for the README's schedule and a composed one.
//!
//! After criterion's run the bench prints its own figures: each text
//! parsed in 201 rounds of 200 parses, fastest round, which other
//! processes on a busy machine disturb less.
//!
//! ```text
//! cargo bench -p backoff-workspace-tests --bench parse -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use backoff_runtime::Policy;
use criterion::{Criterion, criterion_group};

/// The README's first example, without its `when`.
const README: &str = r#"exponential(base = "100ms", max = "5s"), attempts = 5, jitter = "full""#;

/// Two composed stages and a deadline.
const COMPOSED: &str = r#"chain(sum(constant("3m"), exponential(base = "1m", max = "1h"), times = 4), steps("1h", "2h", "4h")), attempts = unlimited, max_elapsed = "48h""#;

const TEXTS: [(&str, &str); 2] = [("readme", README), ("composed", COMPOSED)];

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    for (name, text) in TEXTS {
        assert!(Policy::parse(text).is_ok(), "{text}");
        group.bench_function(name, |b| b.iter(|| Policy::parse(black_box(text))));
    }
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    for (name, text) in TEXTS {
        let fastest = (0..201)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..200 {
                    black_box(Policy::parse(black_box(text)).ok());
                }
                start.elapsed() / 200
            })
            .min()
            .unwrap_or(Duration::ZERO);
        println!(
            "parse/{name}: {:.2} µs (fastest round of 201 × 200)",
            fastest.as_secs_f64() * 1e6
        );
    }
}
