// An async sleep whose future gives a value: one error, naming `sleep`.
use backoff_runtime::retry;

async fn nap(_: std::time::Duration) -> u32 { 0 }

#[retry(sleep = nap)]
async fn f() -> Result<(), ()> { Err(()) }

fn main() {}
