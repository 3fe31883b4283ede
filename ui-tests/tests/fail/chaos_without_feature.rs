// `chaos = ..` without the runtime's feature `chaos`: one error, on the
// argument's name, that names the feature (a plain fn and an `async fn`).
use backoff_runtime::retry;

static FAULTS: u32 = 0;

#[retry(attempts = 3, chaos = FAULTS)]
fn fetch() -> Result<(), std::io::Error> {
    Ok(())
}

#[retry(attempts = 3, chaos = FAULTS)]
async fn fetch_async() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {
    let _ = fetch();
    let _ = fetch_async();
}
