//! With the runtime's `tracing` feature (whose glue the expansion calls
//! after each attempt), a mistake is still reported once, on the user's
//! token, never from the runtime's hidden macros.
//!
//! The `.stderr` files are recorded with Rust 1.95; regenerate them with
//! `TRYBUILD=overwrite cargo test -p ui-tests-tracing` and read the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/fail/*.rs");
}
