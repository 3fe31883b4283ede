use backoff_runtime::retry;

pub struct Request<'h> {
    headers: Option<&'h mut [u8]>,
}

impl<'h> Request<'h> {
    // Storing a `&'h mut` argument in `self` is beyond any loop's borrow
    // checking (rustc's E0521 under the attribute); the argument is not reborrowed per attempt,
    // so that is the one error.
    #[retry(immediate, attempts = 2)]
    pub fn parse(&mut self, headers: &'h mut [u8]) -> Result<usize, ()> {
        let n = headers.len();
        self.headers = Some(headers);
        Ok(n)
    }
}

fn main() {}
