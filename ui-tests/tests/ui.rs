//! Every diagnostic of `#[retry]`, pinned: one compile-fail case per mistake
//! (with the exact message and span in its `.stderr`), and compile-pass cases
//! for every function shape the rewrite supports.
//!
//! The `.stderr` files are recorded with Rust 1.95; regenerate them with
//! `TRYBUILD=overwrite cargo test -p ui-tests` and read the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/fail/*.rs");
    t.pass("tests/pass/*.rs");
}
