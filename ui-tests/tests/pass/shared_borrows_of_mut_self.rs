//! A `&mut self` method whose `Ok` value holds a shared borrow of a field
//! the body does not otherwise use compiles, named lifetime or `async`
//! (the unique-borrow refusal does not reach it).
use backoff_runtime::retry;

pub struct Parser {
    input: String,
    pos: usize,
}

pub struct View<'a> {
    text: &'a str,
}

fn fill(buf: &mut Vec<u8>) {
    buf.push(1);
}

impl Parser {
    #[retry(immediate, attempts = 2)]
    pub fn named<'a>(&'a mut self) -> Result<View<'a>, String> {
        self.pos += 1;
        Ok(View { text: &self.input })
    }

    // A `&mut` argument handed to a call, and a holder of `self`'s lifetime.
    #[retry(immediate, attempts = 2)]
    pub fn filled<'a>(&'a mut self, buf: &mut Vec<u8>) -> Result<View<'a>, String> {
        fill(buf);
        Ok(View { text: &self.input })
    }

    #[retry(immediate, attempts = 2)]
    pub async fn asynchronous(&mut self) -> Result<View<'_>, String> {
        self.pos += 1;
        Ok(View { text: &self.input })
    }
}

fn main() {
    let mut parser = Parser { input: "ab".to_owned(), pos: 0 };
    assert_eq!(parser.named().map(|v| v.text.len()), Ok(2));
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    assert_eq!(rt.block_on(parser.asynchronous()).map(|v| v.text.len()), Ok(2));
    let mut buf = Vec::new();
    assert_eq!(parser.filled(&mut buf).map(|v| v.text.len()), Ok(2));
    assert_eq!((parser.pos, buf.len()), (2, 1));
}
