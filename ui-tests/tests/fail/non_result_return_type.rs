use backoff_runtime::retry;

// By its form no `Result`: refused by the attribute.
#[retry]
fn f() -> Option<u32> { Some(1) }

// A type of the crate's own: checked by type (an alias of `Result` works).
pub struct Status;

#[retry]
fn g() -> Status { Status }

fn main() {}
