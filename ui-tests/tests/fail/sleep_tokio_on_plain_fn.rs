use backoff_runtime::retry;

#[retry(sleep = tokio::time::sleep)]
fn f() -> Result<(), ()> {
    Err(())
}

fn main() {}
