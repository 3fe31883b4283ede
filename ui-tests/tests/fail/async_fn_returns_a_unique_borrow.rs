// An `async fn` whose `Ok` value holds a unique borrow of a `&mut` it was
// given: refused as the plain fn's twin is (rustc's E0524, "two closures
// require unique access", before), one error each, naming the ways out.
use backoff_runtime::retry;

pub struct Multipart {
    buf: Vec<u8>,
}
pub struct Field<'a> {
    multipart: &'a mut Multipart,
}
pub struct ReadyMutGuard<'a> {
    buf: &'a mut Vec<u8>,
}

impl Multipart {
    fn ready_mut(&mut self) -> ReadyMutGuard<'_> {
        ReadyMutGuard { buf: &mut self.buf }
    }

    // axum's `next_field`: a holder whose name does not say so, of `self`
    // handed over.
    #[retry(immediate, attempts = 2)]
    pub async fn next_field(&mut self) -> Result<Option<Field<'_>>, std::io::Error> {
        Ok(Some(Field { multipart: self }))
    }

    // tokio's `AsyncFd::readable_mut`: a guard whose name says `Mut`.
    #[retry(immediate, attempts = 2)]
    pub async fn readable_mut<'a>(&'a mut self) -> std::io::Result<ReadyMutGuard<'a>> {
        Ok(self.ready_mut())
    }

    // The sync refusal's own example, made `async`.
    #[retry(immediate, attempts = 2)]
    pub async fn bytes(&mut self) -> Result<std::slice::IterMut<'_, u8>, std::io::Error> {
        Ok(self.buf.iter_mut())
    }
}

// A `&mut` argument's unique borrow.
#[retry(immediate, attempts = 2)]
pub async fn first(buf: &mut Vec<u8>) -> Result<&mut u8, ()> {
    buf.first_mut().ok_or(())
}

fn main() {}
