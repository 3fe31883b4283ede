use backoff_runtime::retry;

#[retry(attempts = "3")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
