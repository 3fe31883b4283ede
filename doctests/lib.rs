//! The Rust snippets of the README and of `docs/*.md`, each compiled as a
//! doctest (`cargo test -p backoff-doctests --doc`, part of `cargo test
//! --workspace`): a snippet that stops compiling fails CI. A snippet that
//! must not run (it would talk to a server) is marked `no_run`. One that
//! cannot compile alone is marked `ignore`, and the page says why: the
//! guide's shorthand blocks (an attribute beside the code it stands for,
//! said once at the top of the guide) and the excerpts whose whole program
//! is an example CI runs (an HTML comment above the block). `docs/metrics.md`
//! is `backoff-opentelemetry`'s doctests, beside the crate it sets up.

#[doc = include_str!("../README.md")]
mod readme {}

#[doc = include_str!("../docs/guide.md")]
mod guide {}

#[doc = include_str!("../docs/fleets.md")]
mod fleets {}

#[doc = include_str!("../docs/sizing.md")]
mod sizing {}

#[doc = include_str!("../docs/job-systems.md")]
mod job_systems {}

#[doc = include_str!("../docs/performance.md")]
mod performance {}
