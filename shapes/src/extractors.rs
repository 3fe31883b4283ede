//! An axum extractor: an `async fn` in a trait impl taking `&mut Parts`,
//! whose future must stay `Send`.

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use backoff_runtime::retry;

/// The `x-api-key` header, required.
#[derive(Debug, PartialEq, Eq)]
pub struct ApiKey(pub String);

impl<S: Send + Sync> FromRequestParts<S> for ApiKey {
    type Rejection = (StatusCode, &'static str);

    #[retry(immediate, attempts = 2, when = |e: &(StatusCode, &str)| e.0.is_server_error())]
    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let key = parts
            .headers
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .ok_or((StatusCode::UNAUTHORIZED, "missing x-api-key"))?;
        Ok(ApiKey(key.to_owned()))
    }
}

/// A handler-side lookup: a `&mut self` method returning owned data, with
/// `tracing::instrument` below `#[retry]`, so the whole call is one span.
#[derive(Debug, Default)]
pub struct Sessions {
    /// Lookups so far.
    pub lookups: u32,
}

impl Sessions {
    /// Owned data out of a `&mut self` method: fine under any loop.
    #[retry(immediate, attempts = 3)]
    #[tracing::instrument(skip(self))]
    pub async fn lookup(&mut self, id: u32) -> Result<String, StatusCode> {
        self.lookups += 1;
        if self.lookups < 2 {
            return Err(StatusCode::SERVICE_UNAVAILABLE);
        }
        Ok(format!("session-{id}"))
    }
}

/// Read replicas, one read hedged across two of them: when the first is
/// slow (its p95 passes without an answer), the second is asked too, and
/// the first answer wins. `&self` and `&str`: each attempt borrows them.
#[derive(Debug, Default)]
pub struct Replicas {
    /// Reads started so far, across replicas.
    pub reads: std::sync::atomic::AtomicU32,
}

impl Replicas {
    /// The value of `key`, from whichever replica answers first.
    #[retry(hedge = "p95", attempts = 2, when = |e: &StatusCode| e.is_server_error())]
    pub async fn read(&self, key: &str) -> Result<String, StatusCode> {
        let n = self
            .reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if key.is_empty() {
            return Err(StatusCode::BAD_REQUEST);
        }
        Ok(format!("{key}@replica-{}", n % 2))
    }
}
