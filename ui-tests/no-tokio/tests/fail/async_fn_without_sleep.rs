use backoff_runtime::retry;

#[retry]
async fn fetch() -> Result<(), ()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
