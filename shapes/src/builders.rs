//! Builders and requests taken by value (reqwest's `RequestBuilder::send`,
//! hyper's `Request`, clap's `Command`): the body moves them, so each
//! attempt gets a clone with `clone(..)`.

use std::sync::atomic::{AtomicU32, Ordering};

use backoff_runtime::retry;

use crate::{Error, is_transient};

/// How many times a [`Request`] was cloned, for the tests.
pub static REQUEST_CLONES: AtomicU32 = AtomicU32::new(0);

/// A request: moved into the call that sends it.
#[derive(Debug, PartialEq, Eq)]
pub struct Request {
    /// Where to.
    pub url: String,
    /// What.
    pub body: Vec<u8>,
}

impl Clone for Request {
    fn clone(&self) -> Self {
        REQUEST_CLONES.fetch_add(1, Ordering::Relaxed);
        Request {
            url: self.url.clone(),
            body: self.body.clone(),
        }
    }
}

/// A transport that fails its first `failures` sends.
#[derive(Debug, Default)]
pub struct Transport {
    /// Sends still to fail.
    pub failures: u32,
    /// Requests sent, in order.
    pub sent: Vec<Request>,
}

impl Transport {
    /// Takes the request by value, like hyper's `Client::request`.
    pub fn send(&mut self, request: Request) -> Result<usize, Error> {
        if self.failures > 0 {
            self.failures -= 1;
            return Err(Error::Transient);
        }
        let n = request.body.len();
        self.sent.push(request);
        Ok(n)
    }
}

/// A by-value argument moved by the body: one clone per attempt.
#[retry(immediate, attempts = 4, when = is_transient, clone(request))]
pub fn send(transport: &mut Transport, request: Request) -> Result<usize, Error> {
    transport.send(request)
}

/// The same, `async`.
#[retry(immediate, attempts = 4, when = is_transient, clone(request))]
pub async fn send_async(transport: &mut Transport, request: Request) -> Result<usize, Error> {
    tokio::task::yield_now().await;
    transport.send(request)
}

/// A builder consumed by its last step (`self` by value).
#[derive(Debug, Clone, Default)]
pub struct ClientBuilder {
    /// Host to connect to.
    pub host: String,
    /// Port, if set.
    pub port: Option<u16>,
}

/// What [`ClientBuilder::connect`] builds.
#[derive(Debug, PartialEq, Eq)]
pub struct Client {
    /// `host:port`.
    pub address: String,
}

impl ClientBuilder {
    /// Sets the host.
    #[must_use]
    pub fn host(mut self, host: &str) -> Self {
        self.host = host.to_owned();
        self
    }

    /// Consumes the builder; each attempt gets its own clone of it.
    #[retry(immediate, attempts = 3, when = is_transient, clone(self))]
    pub fn connect(self, reachable: &dyn Fn(&str) -> bool) -> Result<Client, Error> {
        let port = self.port.unwrap_or(80);
        if !reachable(&self.host) {
            return Err(Error::Transient);
        }
        let address = format!("{}:{port}", self.host);
        drop(self);
        Ok(Client { address })
    }
}

/// `clone(..)` of a `mut` parameter: the `mut` moves to each attempt's clone.
#[retry(immediate, attempts = 2, clone(bytes))]
pub fn push_marker(mut bytes: Vec<u8>) -> Result<Vec<u8>, Error> {
    bytes.push(0xff);
    Ok(bytes)
}

/// A builder whose body holds an item of its own with a `self` of its own:
/// `clone(self)` renames only the method's `self`.
#[derive(Debug, Clone)]
pub struct Counter {
    /// The count.
    pub n: u32,
}

impl Counter {
    /// `mut self`, cloned per attempt, with a nested `impl`.
    #[retry(immediate, attempts = 2, clone(self))]
    pub fn bumped(mut self) -> Result<u32, Error> {
        struct Doubled(u32);
        impl Doubled {
            fn get(&self) -> u32 {
                self.0 * 2
            }
        }
        self.n += 1;
        Ok(Doubled(self.n).get())
    }
}
