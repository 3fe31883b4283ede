use backoff_runtime::retry;

#[retry(crate = "not a path!")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
