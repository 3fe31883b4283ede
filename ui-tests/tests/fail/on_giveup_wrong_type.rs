use backoff_runtime::{retry, GiveUp};

fn report(error: &String, _: &GiveUp) {
    eprintln!("{error}");
}

#[retry(on_giveup = report)]
fn f() -> Result<u16, String> { Ok(200) }

fn main() {}
