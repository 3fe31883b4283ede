use backoff_runtime::retry;

#[retry(attempts = 3, attempts = 4)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
