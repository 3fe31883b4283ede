// A by-value argument moved by a method that takes `self` (`into_*` by
// the naming convention, `into`), of a type written or an `impl Trait`:
// one error each, on the move, naming `clone(..)`.
use backoff_runtime::retry;

pub struct Request(String);
impl Request {
    fn into_body(self) -> String {
        self.0
    }
}

#[retry(immediate, attempts = 2)]
pub fn body_len(req: Request) -> Result<usize, String> {
    let body = req.into_body();
    Ok(body.len())
}

#[retry(immediate, attempts = 2)]
pub async fn body_len_async(req: Request) -> Result<usize, String> {
    Ok(req.into_body().len())
}

// (An `impl Trait` argument: its type cannot be written in the check.)
#[retry(immediate, attempts = 2)]
pub fn name_len(name: impl Into<String>) -> Result<usize, String> {
    let name: String = name.into();
    Ok(name.len())
}

fn main() {}
