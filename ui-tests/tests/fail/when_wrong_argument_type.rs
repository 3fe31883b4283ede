use backoff_runtime::retry;

#[derive(Debug)]
struct FetchError;
struct OtherError;

fn is_transient(_: &OtherError) -> bool { true }

#[retry(when = is_transient)]
fn f() -> Result<(), FetchError> { Err(FetchError) }

fn main() {}
