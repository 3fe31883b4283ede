use backoff_runtime::retry;

#[retry(max_elapsed = "99999999999999999999999h")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
