// `CircuitOpen` has a field, so `Err(CircuitOpen)` binds a new variable
// that matches any error: one error on each, in the body and in a hook,
// naming `CircuitOpen { .. }`.
use backoff_runtime::{retry, CircuitBreaker, CircuitOpen};
use std::time::{Duration, Instant};

static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));

#[derive(Debug)]
pub enum Error {
    Open(CircuitOpen),
    Io(std::io::Error),
}

impl From<CircuitOpen> for Error {
    fn from(open: CircuitOpen) -> Self {
        Error::Open(open)
    }
}

#[retry(attempts = 3, circuit = BREAKER, when = |e: &Error| !matches!(e, Error::Open(CircuitOpen)))]
pub fn call() -> Result<u32, Error> {
    match BREAKER.acquire(Instant::now()) {
        Err(CircuitOpen) => Ok(0),
        Ok(permit) => {
            permit.success();
            std::fs::read("x").map(|v| v.len() as u32).map_err(Error::Io)
        }
    }
}

#[retry(attempts = 3)]
pub fn open() -> Result<bool, std::io::Error> {
    let refused = BREAKER.acquire(Instant::now()).map(drop);
    Ok(matches!(refused, Err(CircuitOpen)))
}

fn main() {}
