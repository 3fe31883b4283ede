use backoff_runtime::retry;

#[retry(when = |_: &()| true, throttled(constant("1s"), attempts = 3 extra))]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
