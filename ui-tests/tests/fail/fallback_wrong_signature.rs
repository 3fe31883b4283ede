use backoff_runtime::{retry, GiveUp};

#[derive(Debug)]
struct Error;

// Takes the error by reference and returns a bare `u32`.
fn default_value(_: &Error, _: &GiveUp) -> u32 {
    0
}

#[retry(attempts = 3, fallback = default_value)]
fn f() -> Result<u32, Error> {
    Err(Error)
}

fn main() {}
