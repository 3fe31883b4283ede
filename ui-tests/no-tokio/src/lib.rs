//! trybuild tests of `#[retry]` without the `tokio` feature; see `tests/ui.rs`.
