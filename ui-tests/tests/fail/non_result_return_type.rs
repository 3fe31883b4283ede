use backoff_runtime::retry;

#[retry]
fn f() -> Option<u32> { Some(1) }

fn main() {}
