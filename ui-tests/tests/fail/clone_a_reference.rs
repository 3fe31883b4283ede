use backoff_runtime::retry;

#[retry(clone(url))]
fn get(url: &str) -> Result<(), String> {
    Err(url.to_owned())
}

struct Client;

impl Client {
    #[retry(clone(self))]
    fn get(&self) -> Result<(), String> {
        Err(String::new())
    }
}

#[retry(clone(self))]
fn free() -> Result<(), String> {
    Err(String::new())
}

fn main() {}
