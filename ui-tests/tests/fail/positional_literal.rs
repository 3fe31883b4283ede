use backoff_runtime::retry;

#[retry(5)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
