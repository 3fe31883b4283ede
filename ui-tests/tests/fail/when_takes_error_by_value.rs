// A `when` function that takes the error by value: told to take `&E`, with
// no suggestion to borrow the function.
use backoff_runtime::retry;

#[derive(Debug)]
struct FetchError;

fn is_transient(_: FetchError) -> bool { true }

#[retry(when = is_transient)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
