// A function that returns a future is told to become an `async fn` (the
// retry loop needs the `Result`), not that `impl Trait` is unsupported.
use backoff_runtime::retry;
use std::future::Future;

#[derive(Debug)]
pub struct FetchError;

#[retry]
fn fetch() -> impl Future<Output = Result<u32, FetchError>> {
    async { Ok(1) }
}

fn main() {}
