use backoff_runtime::retry;

#[retry(immediate(base = "1s"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
