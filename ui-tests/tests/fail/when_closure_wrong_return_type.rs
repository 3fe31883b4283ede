// A closure for `when` that returns a number: one error, naming `when`.
use backoff_runtime::retry;

#[retry(when = |e| *e + 1)]
fn f() -> Result<(), u32> { Err(1) }

fn main() {}
