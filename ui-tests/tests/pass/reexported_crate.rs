// `crate = "..."` finds the runtime through a re-export.
mod deps {
    pub use backoff_runtime as backoff;
}

#[deps::backoff::retry(crate = "crate::deps::backoff", attempts = 2)]
fn f() -> Result<u8, ()> {
    Ok(1)
}

fn main() {
    assert_eq!(f(), Ok(1));
}
