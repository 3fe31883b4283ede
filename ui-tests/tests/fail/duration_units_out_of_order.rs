use backoff_runtime::retry;

#[retry(max_elapsed = "30s1m")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
