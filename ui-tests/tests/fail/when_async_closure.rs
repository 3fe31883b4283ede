use backoff_runtime::retry;

#[retry(when = async |e: &u32| *e < 3)]
async fn fetch() -> Result<(), u32> {
    Err(1)
}

fn main() {}
