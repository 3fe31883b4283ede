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
