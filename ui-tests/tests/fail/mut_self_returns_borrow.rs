use backoff_runtime::retry;

struct Parser {
    input: String,
    pos: usize,
}

impl Parser {
    fn advance(&mut self) -> Result<(), u32> {
        self.pos += 1;
        Ok(())
    }

    // The body borrows all of `*self` mutably (`advance`) and returns a
    // borrow of it: beyond today's borrow checker inside any loop.
    #[retry]
    fn next_token(&mut self) -> Result<&str, u32> {
        self.advance()?;
        Ok(&self.input[..self.pos])
    }
}

fn main() {}
