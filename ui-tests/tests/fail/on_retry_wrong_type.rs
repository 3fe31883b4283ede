use backoff_runtime::retry;

fn log(_: &()) {}

#[retry(on_retry = log)]
fn f() -> Result<(), ()> { Err(()) }

fn main() {}
