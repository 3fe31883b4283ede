//! trybuild tests of `#[retry]`; see `tests/ui.rs`.
