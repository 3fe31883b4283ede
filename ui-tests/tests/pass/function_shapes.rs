// Every function shape the rewrite supports keeps its signature.
use backoff_runtime::retry;
use std::sync::Arc;

#[derive(Debug)]
pub struct Error;

impl From<std::num::ParseIntError> for Error {
    fn from(_: std::num::ParseIntError) -> Self { Error }
}

pub struct Client {
    name: String,
    calls: u32,
}

impl Client {
    /// Doc comments stay.
    #[retry(immediate)]
    #[must_use = "the result says whether it worked"]
    #[inline]
    pub fn name(&self) -> Result<&str, Error> {
        Ok(&self.name)
    }

    #[retry(immediate)]
    pub(crate) fn bump(&mut self) -> Result<u32, Error> {
        self.calls += 1;
        Ok(self.calls)
    }

    #[retry(immediate)]
    pub async fn shared(self: Arc<Self>) -> Result<usize, Error> {
        Ok(self.name.len())
    }

    #[retry(immediate)]
    pub fn parse(&self, text: &str) -> Result<u32, Error> {
        Ok(text.parse::<u32>()?)
    }
}

pub trait Service {
    #[retry(immediate)]
    fn ping(&self) -> std::io::Result<()> {
        Ok(())
    }

    async fn call(&self, n: u32) -> Result<u32, Error>;

    fn sync_call(&self) -> Result<(), Error>;
}

impl Service for Client {
    #[retry(immediate)]
    async fn call(&self, n: u32) -> Result<u32, Error> {
        Ok(n + self.calls)
    }

    #[retry(immediate)]
    fn sync_call(&self) -> Result<(), Error> {
        Ok(())
    }
}

#[retry(immediate)]
pub fn generic<T, U: Clone>(value: &T, other: U) -> Result<(T, U), Error>
where
    T: Clone + Send,
{
    Ok((value.clone(), other.clone()))
}

#[retry(immediate)]
pub fn impl_trait(items: impl IntoIterator<Item = u8> + Clone) -> Result<usize, Error> {
    Ok(items.clone().into_iter().count())
}

#[retry(immediate)]
pub async fn async_generic<T: Send + Sync>(value: &T) -> Result<&T, Error> {
    Ok(value)
}

/// # Safety
/// Nothing to uphold; `unsafe` is kept.
#[retry(immediate)]
pub unsafe fn unsafe_fn(x: u8) -> Result<u8, Error> {
    Ok(x)
}

type Alias<T> = Result<T, Error>;

#[retry(immediate)]
fn alias() -> Alias<u8> {
    Ok(1)
}

#[retry(immediate)]
fn io_alias() -> std::io::Result<u8> {
    Ok(1)
}

#[retry(immediate)]
fn early_return(flag: bool) -> Result<u8, Error> {
    if flag {
        return Err(Error);
    }
    Ok(1)
}

#[retry(immediate)]
fn mutable_argument(mut n: u32) -> Result<u32, Error> {
    n += 1;
    Ok(n)
}

fn assert_send<T: Send>(_: &T) {}

fn main() {
    let mut client = Client { name: "c".into(), calls: 0 };
    let _ = client.name();
    let _ = client.bump();
    let _ = client.parse("1");
    let _ = client.ping();
    let _ = client.sync_call();
    assert_send(&client.call(1));
    assert_send(&Arc::new(Client { name: "c".into(), calls: 0 }).shared());
    assert_send(&async_generic(&1u8));
    let _ = generic(&1u8, "x");
    let _ = impl_trait(vec![1u8, 2]);
    let _ = unsafe { unsafe_fn(1) };
    let _ = (alias(), io_alias(), early_return(false), mutable_argument(1));
}
