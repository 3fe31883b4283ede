use backoff_runtime::retry;

#[retry(crate = backoff_runtime)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
