use backoff_runtime::retry;

#[retry(linear(base = "20s"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
