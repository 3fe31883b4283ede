use backoff_runtime::retry;

fn is_unavailable(status: &String) -> bool {
    status == "503"
}

#[retry(when_ok = is_unavailable)]
fn f() -> Result<u16, String> { Ok(200) }

fn main() {}
