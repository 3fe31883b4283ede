use backoff_runtime::retry;
use backoff_runtime::Policy;

static POLICY: Policy = Policy::immediate();

#[retry(policy = &POLICY, exponential, attempts = 3, jitter = "none", max_elapsed = "1s")]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
