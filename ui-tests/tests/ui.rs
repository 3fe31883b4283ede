//! Every diagnostic of `#[retry]`, pinned: one compile-fail case per mistake
//! (with the exact message and span in its `.stderr`), and compile-pass cases
//! for every function shape the rewrite supports.
//!
//! The `.stderr` files are recorded with Rust 1.95; regenerate them with
//! `TRYBUILD=overwrite cargo test -p ui-tests` and read the diff.
//!
//! The compile-fail and compile-pass cases are two tests on purpose. trybuild
//! checks a set made only of compile-fail cases with one `cargo check` of all
//! of them, but as soon as one compile-pass case joins the set it builds every
//! case on its own (a `cargo clean` and a `cargo build` per case), which made
//! this test about three times slower. The two tests take turns (trybuild
//! locks its project directory); each prints a line per case as it goes.

/// One `cargo check` for every compile-fail case, then one line per case.
#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/fail/*.rs");
}

/// Each compile-pass case is built and run.
#[test]
fn pass() {
    let t = trybuild::TestCases::new();
    t.pass("tests/pass/*.rs");
}
