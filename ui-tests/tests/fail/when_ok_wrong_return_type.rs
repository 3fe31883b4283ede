// A `when_ok` that returns neither `bool` nor `Decision`: the message names
// `when_ok`, not `when`.
use backoff_runtime::retry;

fn status(code: &u16) -> u16 { *code }

#[retry(when_ok = status)]
fn f() -> Result<u16, String> { Ok(200) }

fn main() {}
