// A body that moves a by-value argument, in the shapes of real crates: one
// error each, on the move, naming `clone(..)` (or the reborrow of a `self`
// that is a `&mut`).
use backoff_runtime::retry;

// reqwest's `connect_with_maybe_proxy`: an argument given to a call.
pub struct Uri(String);
pub struct Conn;
pub struct Http;
impl Http {
    async fn call(&mut self, _: Uri) -> Result<Conn, std::io::Error> {
        Ok(Conn)
    }
}
pub struct Connector {
    http: Http,
}
impl Connector {
    #[retry(immediate, attempts = 2)]
    pub async fn connect(&mut self, dst: Uri, is_proxy: bool) -> Result<Conn, std::io::Error> {
        let _ = is_proxy;
        self.http.call(dst).await
    }
}

// serde_json's `Deserializer` methods: `self` is a `&'a mut` taken by
// value, given away to a struct.
pub struct Deserializer {
    read: Vec<u8>,
}
pub struct SeqAccess<'a> {
    de: &'a mut Deserializer,
}
pub trait Visit {
    fn visit(self) -> Result<usize, std::io::Error>;
}
impl<'a> Visit for &'a mut Deserializer {
    #[retry(immediate, attempts = 2)]
    fn visit(self) -> Result<usize, std::io::Error> {
        let access = SeqAccess { de: self };
        Ok(access.de.read.len())
    }
}

// tracing-subscriber's `try_init`: `self` turned `into` another type.
pub struct Dispatch;
fn set_global_default(_: Dispatch) -> Result<(), std::io::Error> {
    Ok(())
}
pub trait SubscriberInitExt
where
    Self: Into<Dispatch>,
{
    #[retry(immediate, attempts = 2)]
    fn try_init(self) -> Result<(), std::io::Error> {
        set_global_default(self.into())?;
        Ok(())
    }
}

fn main() {}
