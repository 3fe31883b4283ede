use backoff_runtime::retry;

#[retry(max_elapsed = soon)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
