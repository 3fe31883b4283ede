use backoff_runtime::retry;

#[retry(context = id)]
fn f(id: u32) -> Result<u32, String> { Ok(id) }

fn main() {}
