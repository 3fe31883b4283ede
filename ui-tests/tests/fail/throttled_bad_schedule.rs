use backoff_runtime::retry;

fn classify(_: &()) -> bool { true }

#[retry(throttled(exponential(base = "0ms", factor = 1), attempts = 0), when = classify)]
fn f() -> Result<(), ()> { Ok(()) }

// Any schedule, composed too, checked as the main one is; at most 255
// throttled attempts, as for an `on(..)` arm.
#[retry(throttled(chain(constant("1s"), exponential(base = "2s")), attempts = 300), when = classify)]
fn g() -> Result<(), ()> { Ok(()) }

fn main() {}
