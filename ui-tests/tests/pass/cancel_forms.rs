//! `cancel` given a token by reference, by value in a field, in an `Arc`,
//! in a `static`; beside `when_ok`, `on_retry`, `timeout`, `sleep` (async)
//! and `hedge`; the future stays `Send`.
use backoff_runtime::{retry, CancelToken, Error};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

static SHUTDOWN: LazyLock<CancelToken> = LazyLock::new(CancelToken::new);

struct Service {
    shutdown: CancelToken,
    shared: Arc<CancelToken>,
}

impl Service {
    #[retry(attempts = 3, cancel = self.shutdown, when_ok = |v: &u32| *v == 0, on_retry = |_, _| {})]
    fn plain(&mut self) -> std::io::Result<u32> { Ok(1) }

    #[retry(attempts = 3, cancel = self.shared, timeout = "1s", on_retry = |_, _| {})]
    async fn timed(&self) -> std::io::Result<u32> { Ok(1) }
}

#[retry(attempts = 3, cancel = &*SHUTDOWN, sleep = tokio::time::sleep)]
async fn slept() -> Result<u32, Error<std::num::ParseIntError>> { Ok(1) }

#[retry(hedge = "10ms", attempts = 2, cancel = token, fallback = |_, _| Ok(0))]
async fn hedged(token: &CancelToken) -> std::io::Result<u32> { Ok(1) }

#[retry(hedge = "10ms", attempts = 2, cancel = token, context = ctx)]
async fn hedged_with_context(token: &CancelToken) -> std::io::Result<u32> { Ok(ctx.attempt) }

fn send<F: Send>(f: F) -> F { f }

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut service = Service { shutdown: CancelToken::new(), shared: Arc::new(CancelToken::new()) };
    assert_eq!(service.plain().unwrap(), 1);
    assert_eq!(send(service.timed()).await.unwrap(), 1);
    assert_eq!(send(slept()).await.unwrap(), 1);
    let token = CancelToken::new();
    assert_eq!(send(hedged(&token)).await.unwrap(), 1);
    assert_eq!(send(hedged_with_context(&token)).await.unwrap(), 1);
    let _ = Duration::ZERO;
}
