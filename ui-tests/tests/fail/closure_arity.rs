// Closures given to `when` and `on_giveup` with the wrong number of parameters: one error each, on the parameter list, naming each parameter.
use backoff_runtime::retry;

#[derive(Debug)]
pub struct FetchError;

#[retry(when = |e, attempt| { let _ = (e, attempt); true }, on_giveup = |outcome| { let _ = outcome; })]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
