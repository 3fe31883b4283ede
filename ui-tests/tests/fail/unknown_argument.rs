use backoff_runtime::retry;

#[retry(attempt = 3)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
