//! The Rust snippets of the README and of `docs/*.md`, each compiled as a
//! doctest (`cargo test -p backoff-doctests --doc`): a snippet that stops
//! compiling fails CI. A snippet that must not run (it talks to a server)
//! is marked `no_run`; one that cannot compile alone says why beside its
//! `ignore`.

#[doc = include_str!("../README.md")]
mod readme {}

#[doc = include_str!("../docs/guide.md")]
mod guide {}

#[doc = include_str!("../docs/fleets.md")]
mod fleets {}

#[doc = include_str!("../docs/metrics.md")]
mod metrics {}

#[doc = include_str!("../docs/sizing.md")]
mod sizing {}

#[doc = include_str!("../docs/job-systems.md")]
mod job_systems {}

#[doc = include_str!("../docs/performance.md")]
mod performance {}
