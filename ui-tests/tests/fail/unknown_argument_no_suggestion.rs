use backoff_runtime::retry;

#[retry(verbose = true)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
