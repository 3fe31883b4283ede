//! serde-style visitors and accessors: trait impl methods with generic error
//! types, `self` by value that is not moved, and `Ok` values that borrow
//! from `&self`.

use std::collections::HashMap;
use std::fmt;

use backoff_runtime::retry;
use serde::de::{self, Unexpected, Visitor};

/// Visits a port number, as a serde `Deserialize` impl would.
#[derive(Debug, Clone, Copy)]
pub struct PortVisitor;

impl Visitor<'_> for PortVisitor {
    type Value = u16;

    #[retry(immediate, attempts = 2)]
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a port number")
    }

    #[retry(immediate, attempts = 2)]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u16, E> {
        u16::try_from(v).map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &self))
    }

    #[retry(immediate, attempts = 2)]
    fn visit_str<E>(self, v: &str) -> Result<u16, E>
    where
        E: de::Error,
    {
        v.parse()
            .map_err(|_| E::invalid_value(Unexpected::Str(v), &self))
    }
}

/// Parses a JSON document's `"port"` field with serde_json.
#[retry(immediate, attempts = 2)]
pub fn port_of(json: &str) -> Result<u16, serde_json::Error> {
    let value: serde_json::Value = serde_json::from_str(json)?;
    let port = value
        .get("port")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    Ok(u16::try_from(port).unwrap_or(0))
}

/// A map with fallible lookups.
#[derive(Debug, Default)]
pub struct Headers {
    map: HashMap<String, String>,
}

/// No such header.
#[derive(Debug, PartialEq, Eq)]
pub struct Missing;

impl Headers {
    /// Inserts a header.
    pub fn insert(&mut self, name: &str, value: &str) {
        self.map.insert(name.to_owned(), value.to_owned());
    }

    /// An accessor whose `Ok` value borrows from `&self` (a shared borrow,
    /// which any loop may return).
    #[retry(immediate, attempts = 2)]
    pub fn get(&self, name: &str) -> Result<&str, Missing> {
        self.map.get(name).map(String::as_str).ok_or(Missing)
    }

    /// `impl Trait` in the `Ok` type (tokio's `lookup_host` shape).
    #[retry(immediate, attempts = 2)]
    pub fn names(&self) -> Result<impl Iterator<Item = &str> + '_, Missing> {
        if self.map.is_empty() {
            return Err(Missing);
        }
        Ok(self.map.keys().map(String::as_str))
    }

    /// The same, `async`.
    #[retry(immediate, attempts = 2)]
    pub async fn count_names(&self) -> Result<impl Iterator<Item = usize>, Missing> {
        tokio::task::yield_now().await;
        Ok(0..self.map.len())
    }
}
