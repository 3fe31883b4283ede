//! `#[tracing::instrument]` beside `#[retry]`: below it on a `&mut self`
//! method (one span for the whole call), and above it where the arguments
//! can be given to each attempt (a span per attempt).
use backoff_runtime::retry;

struct Sessions {
    lookups: u32,
}

impl Sessions {
    #[retry(immediate, attempts = 3)]
    #[tracing::instrument(skip(self))]
    async fn lookup(&mut self, id: u32) -> Result<String, u32> {
        self.lookups += 1;
        if self.lookups < 2 {
            return Err(self.lookups);
        }
        Ok(format!("session-{id}"))
    }

    #[tracing::instrument(skip(self))]
    #[retry(immediate, attempts = 3)]
    async fn peek(&self, id: u32) -> Result<String, u32> {
        Ok(format!("{id}:{}", self.lookups))
    }

    #[tracing::instrument(skip(self))]
    #[retry(immediate, attempts = 3)]
    fn bump(&mut self) -> Result<u32, u32> {
        self.lookups += 1;
        Ok(self.lookups)
    }
}

#[tracing::instrument(skip(out))]
#[retry(immediate, attempts = 3)]
async fn fill(out: &mut Vec<u32>, n: u32) -> Result<usize, u32> {
    out.push(n);
    if out.len() < 2 { Err(n) } else { Ok(out.len()) }
}

// A by-value argument under `#[tracing::instrument]` above `#[retry]`: each
// attempt's future gets a clone of its own.
#[tracing::instrument]
#[retry(immediate, attempts = 3, clone(name))]
async fn greet(name: String, fails: &std::sync::atomic::AtomicU32) -> Result<String, u32> {
    if fails.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) > 0 {
        return Err(1);
    }
    Ok(name)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut sessions = Sessions { lookups: 0 };
    assert_eq!(sessions.lookup(7).await, Ok("session-7".to_owned()));
    assert_eq!(sessions.peek(1).await, Ok("1:2".to_owned()));
    assert_eq!(sessions.bump(), Ok(3));
    let mut out = Vec::new();
    assert_eq!(fill(&mut out, 5).await, Ok(2));
    let fails = std::sync::atomic::AtomicU32::new(2);
    assert_eq!(greet("ada".to_owned(), &fails).await, Ok("ada".to_owned()));
}
