use backoff_runtime::retry;

#[retry(max_elapsed = "0.5ns")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
