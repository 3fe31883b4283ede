//! Without the runtime's `tokio` feature, an `async fn` under `#[retry]`
//! has no default sleep: a compile error naming both fixes. With
//! `sleep = ...` it compiles.
//!
//! The `.stderr` files are recorded with Rust 1.95; regenerate them with
//! `TRYBUILD=overwrite cargo test -p ui-tests-no-tokio` and read the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/fail/*.rs");
    t.pass("tests/pass/*.rs");
}
