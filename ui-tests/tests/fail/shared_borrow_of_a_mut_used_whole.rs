// A function whose `Ok` value holds a *shared* borrow of `&mut self` or of
// a `&mut` argument, whose body also takes it whole and uniquely: one
// error each, on the borrow, naming the use and the ways out (rustc's
// "captured variable cannot escape `FnMut` closure body", before).
use backoff_runtime::retry;
use std::mem::MaybeUninit;

// reqwest's `Body::buffer`: a field assigned, then a method of `self`.
pub enum Kind {
    Reader(Vec<u8>),
    Bytes(Vec<u8>),
}
pub struct Body {
    kind: Option<Kind>,
}
impl Body {
    #[retry(immediate, attempts = 2)]
    pub fn buffer(&mut self) -> Result<&[u8], String> {
        match self.kind {
            Some(Kind::Reader(ref mut reader)) => {
                let bytes = std::mem::take(reader);
                self.kind = Some(Kind::Bytes(bytes));
                self.buffer()
            }
            Some(Kind::Bytes(ref bytes)) => Ok(bytes.as_ref()),
            None => Err("no body".to_owned()),
        }
    }
}

// http's `parse_hdr`: the scratch buffer filled through `iter_mut`, then
// a shared borrow of it returned.
pub struct HdrName<'a>(&'a [MaybeUninit<u8>]);
#[retry(immediate, attempts = 2)]
pub fn parse_hdr<'a>(data: &[u8], b: &'a mut [MaybeUninit<u8>; 64]) -> Result<HdrName<'a>, String> {
    data.iter().zip(b.iter_mut()).for_each(|(i, out)| *out = MaybeUninit::new(*i));
    Ok(HdrName(&b[..data.len()]))
}

// A parser's `next_token`: an elided shared borrow after `&mut *self`.
pub struct Parser {
    input: String,
}
fn advance(_: &mut Parser) {}
impl Parser {
    #[retry(immediate, attempts = 2)]
    pub fn next_token(&mut self) -> Result<&str, String> {
        advance(&mut *self);
        Ok(&self.input)
    }
}

fn main() {}
