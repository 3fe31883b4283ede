use backoff_runtime::retry;

fn consume(s: String) -> usize {
    s.len()
}

// The body gives `name` away: two attempts at once cannot both have it.
#[retry(hedge = "20ms", attempts = 2)]
async fn fetch(name: String) -> Result<usize, std::io::Error> {
    Ok(consume(name))
}

fn main() {}
