// A `when` of the wrong type, forwarded through a `macro_rules!`: reported
// once, on the caller's tokens, as without the macro.
use backoff_runtime::retry;

#[derive(Debug)]
struct FetchError;
struct OtherError;

fn is_transient(_: &OtherError) -> bool { true }

macro_rules! retried {
    ($when:path) => {
        #[retry(when = $when)]
        fn f() -> Result<(), FetchError> { Err(FetchError) }
    };
}

retried!(is_transient);

fn main() {}
