use backoff_runtime::retry;

#[retry]
#[track_caller]
fn check(x: u32) -> Result<u32, u32> {
    Ok(x)
}

fn main() {}
