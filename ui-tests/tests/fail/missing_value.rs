use backoff_runtime::retry;

#[retry(attempts)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
