// `on_retry` as it was under `hedge` when hedges went to it too
// (`Option<&E>`, `None` for a hedge): one error, saying where hedges go
// now; the imports the closures name are not reported unused.
use backoff_runtime::{retry, RetryEvent};

#[retry(hedge = "20ms", attempts = 2, on_retry = |e: Option<&std::io::Error>, ev: &RetryEvent| {
    let _ = (e, ev);
})]
async fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

// A hook the attribute refuses, whose closure names an import: only the
// attribute's error.
#[retry(hedge = "20ms", attempts = 2, on_retry = |ev: &RetryEvent| {
    let _ = ev;
})]
async fn event_only() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
