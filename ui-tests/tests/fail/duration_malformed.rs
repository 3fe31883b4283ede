use backoff_runtime::retry;

#[retry(max_elapsed = "1.5.3s")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
