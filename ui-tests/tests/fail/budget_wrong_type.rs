use backoff_runtime::retry;

static BUDGET: u32 = 5;

#[retry(budget = BUDGET)]
fn f() -> Result<(), ()> { Ok(()) }

fn main() {}
