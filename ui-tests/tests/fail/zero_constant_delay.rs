use backoff_runtime::retry;

#[retry(constant("0s"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
