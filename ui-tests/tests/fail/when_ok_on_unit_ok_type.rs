use backoff_runtime::retry;

#[retry(when_ok = |_| true)]
fn f() -> std::io::Result<()> { Ok(()) }

fn main() {}
