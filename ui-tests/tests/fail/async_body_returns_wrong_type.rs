use backoff_runtime::retry;

#[retry]
async fn fetch(fail: bool) -> Result<u32, String> {
    if fail {
        return Err(404);
    }
    Ok(1)
}

fn main() {}
