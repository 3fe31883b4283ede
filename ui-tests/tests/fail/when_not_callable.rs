use backoff_runtime::retry;

#[retry(when = 42)]
fn f() -> Result<(), ()> { Err(()) }

fn main() {}
