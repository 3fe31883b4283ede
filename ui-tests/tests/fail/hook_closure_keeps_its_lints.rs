#![deny(unused_mut)]
use backoff_runtime::retry;

// The expansion hides no lint of the user's: a needless `mut` inside a
// hook's closure is reported as without `#[retry]`.
#[retry(immediate, when = |e| {
    let mut limit = 3;
    *e < limit
})]
fn f() -> Result<(), u32> {
    Err(1)
}

fn main() {}
