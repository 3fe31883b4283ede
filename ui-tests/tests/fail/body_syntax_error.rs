// The attribute does not parse the body: a syntax error in it is rustc's
// own, at the body's tokens, once, and the attribute adds nothing.
use backoff_runtime::retry;

#[retry]
fn parse(input: &str) -> Result<u64, ()> {
    let n = ;
    Ok(input.len() as u64)
}

#[retry(attempts = 3)]
async fn fetch(input: &str) -> Result<u64, ()> {
    let n = input.len() +;
    Ok(n as u64)
}

fn main() {}
