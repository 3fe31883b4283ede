use backoff_runtime::retry;

static BREAKER: &str = "open";

#[derive(Debug)]
struct Error;
impl From<backoff_runtime::CircuitOpen> for Error {
    fn from(_: backoff_runtime::CircuitOpen) -> Self { Error }
}

#[retry(circuit = BREAKER)]
fn f() -> Result<(), Error> { Ok(()) }

fn main() {}
