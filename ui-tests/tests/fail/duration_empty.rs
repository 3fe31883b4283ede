use backoff_runtime::retry;

#[retry(max_elapsed = "")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
