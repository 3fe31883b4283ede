//! Ready policies for common cases: the Effect pattern's "Backoff
//! Configuration Guide" and AWS SDKs' standard mode. Each is exponential
//! (factor 2) with full jitter; its `maxRetries` counts retries, so
//! `attempts` is one more. The attribute's `preset = "external_api"` is
//! the constant of that name in lower case, and a strategy, `attempts` or
//! `jitter` written beside it replaces that part.
//!
//! | preset | base | max | attempts | delays before jitter |
//! |---|---|---|---|---|
//! | [`INTERNAL_API`] | 10 ms | 1 s | 6 | 10, 20, 40, 80, 160 ms |
//! | [`EXTERNAL_API`] | 100 ms | 10 s | 6 | 0.1, 0.2, 0.4, 0.8, 1.6 s |
//! | [`RATE_LIMITED`] | 500 ms | 60 s | 11 | 0.5, 1, 2, 4, 8, 16, 32, 60, 60, 60 s |
//! | [`DATABASE`] | 50 ms | 5 s | 4 | 50, 100, 200 ms |
//! | [`THIRD_PARTY`] | 1 s | 30 s | 6 | 1, 2, 4, 8, 16 s |
//! | [`AWS_STANDARD`] | 1 s | 20 s | 3 | 1, 2 s |
//!
//! Full jitter sleeps uniformly between zero and each delay.
//!
//! ```
//! use backoff_runtime::{Jitter, presets};
//!
//! let ms: Vec<u128> = presets::DATABASE.jitter(Jitter::None).delays().map(|d| d.as_millis()).collect();
//! assert_eq!(ms, [50, 100, 200]);
//! assert_eq!(presets::AWS_STANDARD.attempt_limit(), Some(3));
//! ```

use core::time::Duration;

use crate::Policy;

/// Exponential from `base_ms`, capped at `max_ms`, full jitter, `attempts`.
const fn preset(base_ms: u64, max_ms: u64, attempts: u32) -> Policy {
    Policy::exponential(Duration::from_millis(base_ms))
        .max_delay(Duration::from_millis(max_ms))
        .attempts(attempts)
}

/// A fast internal API: 10 ms to 1 s, 5 retries (quick recovery expected).
pub const INTERNAL_API: Policy = preset(10, 1_000, 6);
/// An external API: 100 ms to 10 s, 5 retries (slower recovery).
pub const EXTERNAL_API: Policy = preset(100, 10_000, 6);
/// A rate-limited API: 500 ms to 60 s, 10 retries (respect the limits).
pub const RATE_LIMITED: Policy = preset(500, 60_000, 11);
/// A database: 50 ms to 5 s, 3 retries (quick local recovery).
pub const DATABASE: Policy = preset(50, 5_000, 4);
/// A third-party service: 1 s to 30 s, 5 retries (conservative).
pub const THIRD_PARTY: Policy = preset(1_000, 30_000, 6);
/// AWS SDKs' standard mode: 3 attempts, 1 s doubling to at most 20 s.
pub const AWS_STANDARD: Policy = preset(1_000, 20_000, 3);
