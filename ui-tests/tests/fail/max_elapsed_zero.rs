use backoff_runtime::retry;

#[retry(max_elapsed = "0s")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
