use backoff_runtime::retry;

#[retry]
fn f() {}

fn main() {}
