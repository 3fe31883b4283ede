// A by-value argument given to a method that takes `self` (reqwest's
// `RequestBuilder::send` and `header`): one error each, on the argument,
// naming `clone(..)`. The same calls on methods that borrow (`&self`,
// `&mut self`, a `str` method through `String`'s `Deref`) or on a `Copy`
// type compile: whether a call moves its receiver is the compiler's
// answer, not the method's name.
use backoff_runtime::retry;

// reqwest's shapes: a builder consumed by `header` and `send`.
pub struct RequestBuilder(String);
pub struct Response(u16);
impl RequestBuilder {
    pub fn header<K: Into<String>, V: Into<String>>(mut self, k: K, v: V) -> Self {
        self.0 = format!("{}{}{}", self.0, k.into(), v.into());
        self
    }
    pub async fn send(self) -> Result<Response, std::io::Error> {
        Ok(Response(self.0.len() as u16))
    }
    pub fn url(&self) -> &str {
        &self.0
    }
    pub fn set_url(&mut self, url: &str) {
        self.0 = url.to_owned();
    }
}

#[retry(immediate, attempts = 3)]
pub async fn send(req: RequestBuilder) -> Result<Response, std::io::Error> {
    req.send().await
}

#[retry(immediate, attempts = 3)]
pub async fn send_with_header(req: RequestBuilder) -> Result<Response, std::io::Error> {
    let req = req.header("x-request-id", "1");
    req.send().await
}

// A `self` that a method takes by value.
pub struct Job(Vec<u8>);
impl Job {
    fn finish(self) -> Result<usize, String> {
        Ok(self.0.len())
    }
    #[retry(immediate, attempts = 2)]
    pub fn run(self) -> Result<usize, String> {
        self.finish()
    }
}

// These compile: the calls borrow, or the type is `Copy`.
#[derive(Clone, Copy)]
pub struct Port(u16);
impl Port {
    fn number(self) -> u16 {
        self.0
    }
}

#[retry(immediate, attempts = 3)]
pub fn borrowed(mut req: RequestBuilder, name: String, port: Port) -> Result<usize, String> {
    req.set_url("http://localhost/");
    let n: u16 = name.trim().parse().map_err(|_| String::new())?;
    Ok(req.url().len() + name.len() + usize::from(n) + usize::from(port.number()))
}

fn main() {}
