use backoff_runtime::retry;

#[retry(policy = 5)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
