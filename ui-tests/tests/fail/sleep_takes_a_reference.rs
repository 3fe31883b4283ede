// A sleep that takes `&Duration`: told to take a `Duration`, with no
// suggestion to dereference the function.
use backoff_runtime::retry;

fn nap(d: &std::time::Duration) { std::thread::sleep(*d) }

#[retry(sleep = nap)]
fn f() -> Result<(), ()> { Err(()) }

fn main() {}
