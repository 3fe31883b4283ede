use backoff_runtime::retry;

#[retry]
struct Client;

fn main() {}
