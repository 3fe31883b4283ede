use backoff_runtime::retry;

struct Cache {
    v: Vec<u8>,
}

impl Cache {
    // A `&mut` borrowed from `&mut self` cannot leave a loop that borrows
    // `self` again on the next attempt.
    #[retry]
    fn get(&mut self) -> Result<&mut Vec<u8>, String> {
        Ok(&mut self.v)
    }
}

fn main() {}
