use backoff_runtime::retry;

#[retry(sleep = std::thread::sleep)]
async fn f() -> Result<(), ()> {
    Err(())
}

fn main() {}
