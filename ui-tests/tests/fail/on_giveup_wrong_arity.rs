// An `on_giveup` of one parameter.
use backoff_runtime::retry;

fn report(_: &Result<(), u32>) {}

#[retry(on_giveup = report)]
fn f() -> Result<(), u32> { Err(1) }

fn main() {}
