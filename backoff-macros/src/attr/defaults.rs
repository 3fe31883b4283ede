//! The defaults, the schedule language's (`backoff-schedule`): the
//! growing strategies' base and max, `constant`'s delay, `sidekiq`'s unit,
//! the attempt limit; and the presets. Messages that name a default print
//! these values.

pub(crate) use backoff_schedule::DEFAULT_ATTEMPTS as ATTEMPTS;
pub(crate) use backoff_schedule::macro_support::{BASE, UNIT, base};

/// `preset = ".."`: each name, and its exponential's base and max in
/// milliseconds and its attempts, full jitter (the runtime's `presets`,
/// whose constants these are in lower case; `tests/presets.rs` checks the
/// two agree).
pub(crate) const PRESETS: [Preset; 6] = [
    ("internal_api", 10, 1_000, 6),
    ("external_api", 100, 10_000, 6),
    ("rate_limited", 500, 60_000, 11),
    ("database", 50, 5_000, 4),
    ("third_party", 1_000, 30_000, 6),
    ("aws_standard", 1_000, 20_000, 3),
];

/// A preset: its name, base and max in milliseconds, and attempts.
pub(crate) type Preset = (&'static str, u64, u64, u64);
