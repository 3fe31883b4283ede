use backoff_runtime::retry;

fn is_transient(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::Interrupted
}

// `when` must take `&E`; for a generic `E`, rustc says so plainly.
#[retry(when = is_transient)]
fn call<E>(op: fn() -> Result<u32, E>) -> Result<u32, E> {
    op()
}

// A generic `when` of `&E` compiles.
fn never<T>(_: &T) -> bool {
    false
}

#[retry(when = never)]
fn call_generic<E>(op: fn() -> Result<u32, E>) -> Result<u32, E> {
    op()
}

fn main() {}
