use backoff_runtime::retry;

#[retry(on_give_up = |_, _| ())]
fn f() -> Result<(), String> { Ok(()) }

fn main() {}
