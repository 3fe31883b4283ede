//! `#[retry]` on the shapes real functions have: the shapes found by putting
//! the attribute on every `Result`-returning function of widely used crates
//! (serde_json, url, http, hyper, axum, tokio, reqwest, regex-automata, ..).
//!
//! This crate is its own test: it must build warning-free under
//! `cargo clippy --all-targets -- -D warnings` at `rust-version = "1.85"`
//! (so the expansion uses nothing newer, and adds no warning), and the
//! `#[expect(..)]` attributes in [`lints`] fail the build if the expansion
//! hides a lint the function has without `#[retry]`. `tests/shapes.rs` runs
//! them.

pub mod builders;
pub mod controls;
pub mod extractors;
pub mod files;
pub mod lints;
pub mod serializers;
pub mod visitors;

use std::fmt;

/// An error that is sometimes worth retrying.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Try again.
    Transient,
    /// Do not.
    Fatal(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Transient => f.write_str("transient"),
            Error::Fatal(why) => write!(f, "fatal: {why}"),
        }
    }
}

impl std::error::Error for Error {}

/// Retry only [`Error::Transient`].
pub fn is_transient(e: &Error) -> bool {
    matches!(e, Error::Transient)
}
