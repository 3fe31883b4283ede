use backoff_runtime::retry;

#[retry(exponential(factor), circuit)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
