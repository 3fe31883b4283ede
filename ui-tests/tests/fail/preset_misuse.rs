// `preset` misspelled, in another case, not a string, and beside `policy`.
use backoff_runtime::{Policy, retry};

#[retry(preset = "external_apy")]
fn misspelled() -> Result<(), ()> {
    Ok(())
}

#[retry(preset = "EXTERNAL_API")]
fn upper_case() -> Result<(), ()> {
    Ok(())
}

#[retry(preset = external_api)]
fn unquoted() -> Result<(), ()> {
    Ok(())
}

static POLICY: Policy = Policy::immediate();

#[retry(preset = "database", policy = &POLICY)]
fn beside_policy() -> Result<(), ()> {
    Ok(())
}

fn main() {}
