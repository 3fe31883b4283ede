use backoff_runtime::retry;

fn main() {
    let fetch = #[retry(attempts = 3)]
    || -> Result<u32, std::io::Error> { Ok(1) };
    let _ = fetch();
}
