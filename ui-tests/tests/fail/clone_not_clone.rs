use backoff_runtime::retry;

struct Request;

#[retry(clone(request))]
fn send(request: Request) -> Result<(), String> {
    drop(request);
    Err(String::new())
}

#[retry(clone(path))]
fn read(path: impl AsRef<std::path::Path>) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

fn main() {}
