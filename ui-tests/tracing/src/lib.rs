//! trybuild tests of `#[retry]` with the `tracing` feature; see `tests/ui.rs`.
