use backoff_runtime::retry;

#[retry(attempts = 3, fallback = |_, _| Ok("cached"))]
fn f() -> Result<u32, std::io::Error> {
    Err(std::io::Error::other("down"))
}

fn main() {}
