use backoff_runtime::retry;

fn classify(_: &()) -> u32 { 1 }

#[retry(when = classify)]
fn f() -> Result<(), ()> { Err(()) }

fn main() {}
