//! Shared borrows of a `&mut` in the `Ok` value that compile, and that the
//! refusal of a `&mut` used whole must leave alone: the lifetime is also
//! another argument's, or the body calls a method of `self` (which may take
//! `&self`) without mutating through it.
use backoff_runtime::retry;

pub struct Parser {
    input: String,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.input.chars().next()
    }

    // Only `&self` methods: the attempts borrow `*self` shared.
    #[retry(immediate, attempts = 2)]
    pub fn peeked(&mut self) -> Result<&str, String> {
        self.peek().ok_or_else(String::new)?;
        Ok(&self.input)
    }
}

// The `Ok` value borrows `src`, which has the `&mut`'s lifetime too.
#[retry(immediate, attempts = 2)]
pub fn pushed<'a>(buf: &'a mut Vec<u8>, src: &'a str) -> Result<&'a str, String> {
    buf.push(1);
    Ok(src)
}

fn main() {
    let mut parser = Parser { input: "ab".to_owned() };
    assert_eq!(parser.peeked().map(str::len), Ok(2));
    let mut buf = Vec::new();
    assert_eq!(pushed(&mut buf, "x"), Ok("x"));
    assert_eq!(buf, [1]);
}
