// A closure whose parameter is written with another type than the error: the
// same message as for a function, naming `when` and the expected `&u32`.
use backoff_runtime::retry;

#[retry(when = |e: &String| e.is_empty())]
fn f() -> Result<(), u32> { Err(1) }

fn main() {}
