use backoff_runtime::retry;

struct Sessions {
    lookups: u32,
}

impl Sessions {
    // `#[tracing::instrument]` runs first and moves `self` into a future of
    // its own; the fix is the other order.
    #[tracing::instrument(skip(self))]
    #[retry(immediate, attempts = 3)]
    async fn lookup(&mut self, id: u32) -> Result<String, u32> {
        self.lookups += 1;
        Ok(format!("session-{id}"))
    }
}

fn main() {}
