// `?` on a foreign error that an `io::Error` does not convert into, in a fn
// returning `backoff_runtime::Error<E>`: the message names the fix
// (`.map_err(Error::Inner)?`) and the docs of `ForeignError`.
use backoff_runtime::Error;

#[derive(Debug)]
struct ApiError;

fn call() -> Result<(), ApiError> {
    Err(ApiError)
}

fn fetch() -> Result<(), Error<ApiError>> {
    call()?;
    Ok(())
}

fn main() {
    let _ = fetch();
}
