//! Shared controls named by a `static` (a breaker and a budget, and a
//! `LazyLock` of one, as a fleet builds them), and the split that a body
//! refused for returning a borrow of `self` it also mutates takes
//! (reqwest's `Body::buffer`).

use std::sync::LazyLock;
use std::time::Duration;

use backoff_runtime::{CircuitBreaker, CircuitOpen, RetryBudget, retry};

use crate::Error;

/// A breaker shared by every call that names it.
pub static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));

/// A budget built on first use.
pub static BUDGET: LazyLock<RetryBudget> = LazyLock::new(|| RetryBudget::new(10, 0.1));

impl From<CircuitOpen> for Error {
    fn from(open: CircuitOpen) -> Self {
        Error::Fatal(format!("circuit open: {open}"))
    }
}

/// Fails `failures` times, then gives `n`.
#[retry(immediate, attempts = 3, circuit = BREAKER, budget = BUDGET)]
pub fn guarded(failures: &mut u32, n: u32) -> Result<u32, Error> {
    if *failures > 0 {
        *failures -= 1;
        return Err(Error::Transient);
    }
    Ok(n)
}

/// A request body read into memory on first use.
pub enum Body {
    /// Not read yet.
    Reader(Vec<u8>),
    /// Read.
    Bytes(Vec<u8>),
}

impl Body {
    /// Reads the body into memory (the fallible, retried part).
    #[retry(immediate, attempts = 2)]
    pub fn fill(&mut self) -> Result<(), Error> {
        if let Body::Reader(reader) = self {
            let bytes = std::mem::take(reader);
            *self = Body::Bytes(bytes);
        }
        Ok(())
    }

    /// The body in memory: the borrow taken after the retried part, without
    /// `#[retry]` (one attribute on both would be refused: the body assigns
    /// through `self` and returns a borrow of it).
    pub fn buffer(&mut self) -> Result<&[u8], Error> {
        self.fill()?;
        match self {
            Body::Bytes(bytes) => Ok(bytes),
            Body::Reader(_) => Err(Error::Fatal("not read".to_owned())),
        }
    }
}
