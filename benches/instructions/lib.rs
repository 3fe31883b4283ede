//! Nothing to use: this package holds the instruction-count bench,
//! `instructions.rs` (`cargo bench -p backoff-instructions-bench`), in a
//! package of its own so that `backoff-runtime` is built with its default
//! features only.
