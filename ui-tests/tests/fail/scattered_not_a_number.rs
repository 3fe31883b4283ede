use backoff_runtime::retry;

#[retry(jitter = scattered("half"))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
