use backoff_runtime::retry;
use std::collections::HashMap;

struct Parser {
    input: String,
    pos: usize,
    names: HashMap<String, u32>,
}

impl Parser {
    // A shared borrow of a field the body does not otherwise use: compiles.
    #[retry]
    fn rest(&mut self) -> Result<&str, u32> {
        self.pos += 1;
        Ok(&self.input[self.pos.min(self.input.len())..])
    }

    // A type that holds a unique borrow of `self`: refused.
    #[retry]
    fn names(&mut self) -> Result<std::collections::hash_map::ValuesMut<'_, String, u32>, ()> {
        Ok(self.names.values_mut())
    }
}

struct Entry {
    line: String,
}

struct Log {
    lines: Vec<String>,
}

impl Log {
    // An owned type of a holder's name (no lifetime): compiles.
    #[retry]
    fn next(&mut self) -> Result<Entry, ()> {
        self.lines.pop().map(|line| Entry { line }).ok_or(())
    }
}

// A unique borrow of a `&mut` argument: refused.
#[retry]
fn first(buf: &mut Vec<u8>) -> Result<&mut u8, ()> {
    buf.first_mut().ok_or(())
}

// A shared one: compiles.
#[retry]
fn peek(buf: &mut Vec<u8>) -> Result<&u8, ()> {
    buf.first().ok_or(())
}

// Not a borrow of the argument.
#[retry]
fn literal(_buf: &mut Vec<u8>) -> Result<&'static str, ()> {
    Ok("x")
}

fn main() {
    let _ = Log { lines: Vec::new() }.next().map(|e| e.line);
}
