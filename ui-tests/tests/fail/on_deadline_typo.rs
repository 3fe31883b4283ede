// A misspelt `on_deadline` rule is told the rule it is close to.
use backoff_runtime::retry;

#[retry(max_elapsed = "30s", on_deadline = "lasttry")]
fn f() -> Result<(), std::io::Error> {
    Ok(())
}

#[retry(max_elapsed = "30s", on_deadline = "giveup")]
fn g() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
