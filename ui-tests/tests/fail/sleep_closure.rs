use backoff_runtime::retry;

#[retry(sleep = |d| std::thread::sleep(d))]
fn f() -> Result<(), ()> { Err(()) }

fn main() {}
