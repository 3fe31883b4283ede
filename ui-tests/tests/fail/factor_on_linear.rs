use backoff_runtime::retry;

#[retry(linear(base = "1s", factor = 2))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
