use backoff_runtime::retry;

#[retry(constant("100"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
