use backoff_runtime::{retry, CancelToken};

#[derive(Debug)]
struct Error;

#[retry(attempts = 3, cancel = token)]
fn f(token: &CancelToken) -> Result<(), Error> { Ok(()) }

#[retry(attempts = 3, cancel = token)]
fn g<E: std::fmt::Debug>(token: &CancelToken, op: fn() -> Result<u32, E>) -> Result<u32, E> { op() }

fn main() {}
