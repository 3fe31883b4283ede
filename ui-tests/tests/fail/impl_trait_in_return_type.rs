use backoff_runtime::retry;

#[retry]
fn f() -> Result<impl std::fmt::Display, ()> { Ok(1) }

fn main() {}
