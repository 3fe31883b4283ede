use backoff_runtime::retry;

// A hedged call's attempts overlap: none runs alone long enough to start
// a run of the schedule (`on_success` is taken there).
#[retry(hedge = "50ms", attempts = 3, reset_after = "1m", on_success = |_v, _e| ())]
async fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
