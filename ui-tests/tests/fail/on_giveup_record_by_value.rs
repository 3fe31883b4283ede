// An `on_giveup` that takes the give-up record by value.
use backoff_runtime::{retry, GiveUp};

fn report(_: &Result<(), u32>, report: GiveUp) { let _ = report; }

#[retry(on_giveup = report)]
fn f() -> Result<(), u32> { Err(1) }

fn main() {}
