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

impl Parser {
    #[retry(immediate, attempts = 2)]
    pub fn named<'a>(&'a mut self) -> Result<View<'a>, String> {
        self.pos += 1;
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
    assert_eq!(parser.pos, 2);
}
