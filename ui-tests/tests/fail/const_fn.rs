use backoff_runtime::retry;

#[retry]
const fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
