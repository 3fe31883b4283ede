use backoff_runtime::retry;

#[retry(attempts = unlimted)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
