use backoff_runtime::retry;

#[retry(context = "ctx")]
fn f() -> Result<u32, String> { Ok(1) }

fn main() {}
