use backoff_runtime::retry;

#[retry(constant("1s", "2s"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
