// `steps` given numbers, `steps` given a strategy, `buckets` given its
// unit without the name, `on_deadline` misspelled.
use backoff_runtime::retry;

#[retry(steps(1, 5, 30))]
fn steps_of_numbers() -> Result<(), ()> {
    Ok(())
}

#[retry(steps(constant("1s"), constant("5s")))]
fn steps_of_strategies() -> Result<(), ()> {
    Ok(())
}

#[retry(buckets("1s"))]
fn buckets_unit() -> Result<(), ()> {
    Ok(())
}

#[retry(max_elapsed = "10s", on_deadline = "lasttry")]
fn on_deadline_typo() -> Result<(), ()> {
    Ok(())
}

fn main() {}
