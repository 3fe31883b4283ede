// A function of two parameters given to `when`, which passes one: one error
// on the function's name, in `when`'s terms (not "remove the extra argument").
use backoff_runtime::retry;

fn is_transient(_: &u32, _attempt: u32) -> bool { true }

#[retry(when = is_transient)]
fn f() -> Result<(), u32> { Err(1) }

fn main() {}
