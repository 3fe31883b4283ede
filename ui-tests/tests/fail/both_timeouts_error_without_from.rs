use backoff_runtime::retry;

#[derive(Debug)]
struct Error;

// One error for the missing `From<Elapsed>`, not one per timeout.
#[retry(timeout = "10s", attempt_timeout = "1s")]
async fn fetch() -> Result<(), Error> {
    Err(Error)
}

fn main() {}
