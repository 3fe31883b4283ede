use backoff_runtime::retry;
use backoff_runtime::Policy;

static POLICY: Policy = Policy::immediate();
fn classify(_: &()) -> bool { true }

#[retry(policy = &POLICY, throttled(constant("1s"), attempts = 3), when = classify)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
