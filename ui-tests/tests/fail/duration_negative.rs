use backoff_runtime::retry;

#[retry(max_elapsed = "-1s")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
