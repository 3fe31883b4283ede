// An `on_giveup` that returns a value.
use backoff_runtime::{retry, GiveUp};

fn report(_: &Result<(), u32>, report: &GiveUp) -> u32 { report.attempts }

#[retry(on_giveup = report)]
fn f() -> Result<(), u32> { Err(1) }

fn main() {}
