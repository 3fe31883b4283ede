use backoff_runtime::retry;

struct Parser;

struct ParserI<'a>(&'a mut Parser);

impl Parser {
    #[retry(clone(self))]
    fn parse(&mut self) -> Result<(), String> {
        let _ = ParserI(&mut *self);
        Err(String::new())
    }
}

fn main() {}
