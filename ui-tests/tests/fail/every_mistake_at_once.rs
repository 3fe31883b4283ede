use backoff_runtime::retry;

#[retry(attempt = 3, exponential(base = "0ms", factor = 0.5), jitter = "loud", max_elapsed = "soon")]
fn fetch() -> Result<u32, ()> { Ok(1) }

// The function is still emitted, so this call type-checks: only the
// attribute's mistakes are reported.
fn caller() -> Result<u32, ()> { fetch() }

fn main() {}
