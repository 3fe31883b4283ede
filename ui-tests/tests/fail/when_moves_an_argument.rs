use backoff_runtime::retry;

fn classify(_: String, e: &u32) -> bool {
    *e < 3
}

#[retry(immediate, when = |e| classify(label, e))]
fn send(label: String) -> Result<(), u32> {
    Err(label.len() as u32)
}

fn main() {}
