// An `async` closure as `on_giveup`: one error, and the types its
// parameters name (`GiveUp`) are not reported unused beside it.
use backoff_runtime::{retry, GiveUp};

#[retry(attempts = 2, on_giveup = async |r: &Result<u32, std::io::Error>, g: &GiveUp| {
    let _ = (r, g);
})]
async fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
