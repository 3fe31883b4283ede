// `circuit` and `throttle` given a call that returns a new value each time
// remember nothing between calls: each is refused, as `budget` is in
// `budget_returned_by_a_method`; a reference and an `Arc` pass.
use backoff_runtime::{retry, AdaptiveThrottle, CircuitBreaker, CircuitOpen, Rejected};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug)]
struct Error;

impl From<CircuitOpen> for Error {
    fn from(_: CircuitOpen) -> Self {
        Error
    }
}

impl From<Rejected> for Error {
    fn from(_: Rejected) -> Self {
        Error
    }
}

struct Client {
    breaker: Arc<CircuitBreaker>,
    throttle: AdaptiveThrottle,
}

impl Client {
    fn breaker(&self) -> CircuitBreaker {
        CircuitBreaker::new(5, 1, Duration::from_secs(30))
    }
    fn throttle(&self) -> AdaptiveThrottle {
        AdaptiveThrottle::new(2.0, Duration::from_secs(120))
    }
    fn shared_breaker(&self) -> Arc<CircuitBreaker> {
        self.breaker.clone()
    }
    fn throttle_ref(&self) -> &AdaptiveThrottle {
        &self.throttle
    }

    #[retry(attempts = 3, circuit = self.breaker())]
    fn new_breaker_each_call(&self) -> Result<(), Error> {
        Ok(())
    }

    #[retry(attempts = 3, throttle = self.throttle())]
    fn new_throttle_each_call(&self) -> Result<(), Error> {
        Ok(())
    }

    #[retry(attempts = 3, circuit = self.shared_breaker(), throttle = self.throttle_ref())]
    fn kept_elsewhere(&self) -> Result<(), Error> {
        Ok(())
    }
}

fn main() {}
