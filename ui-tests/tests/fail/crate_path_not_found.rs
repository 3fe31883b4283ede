use backoff_runtime::retry;

// The path given to `crate` is the one the generated code uses.
#[retry(crate = "no_such_crate")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
