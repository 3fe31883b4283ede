//! Arguments a body takes by value where a second attempt still has them:
//! `Copy` types (the attribute's check of them compiles to nothing),
//! `clone(..)`, a rebinding, a method that borrows, a macro's argument.
use backoff_runtime::retry;

#[derive(Clone, Copy, Debug)]
pub struct UserId(u64);

fn lookup(id: UserId) -> Result<u64, String> {
    Ok(id.0)
}

fn consume(s: String) -> usize {
    s.len()
}

#[retry(immediate, attempts = 2)]
pub fn copy_argument(id: UserId, n: u32) -> Result<u64, String> {
    let doubled = lookup(id)? + u64::from(n);
    Ok(doubled + lookup(id)?)
}

#[retry(immediate, attempts = 2, clone(name))]
pub fn cloned(name: String) -> Result<usize, String> {
    Ok(consume(name))
}

#[retry(immediate, attempts = 2)]
pub fn rebound(name: String) -> Result<usize, String> {
    let name = name.clone();
    Ok(consume(name))
}

#[retry(immediate, attempts = 2)]
pub fn borrowed(name: String, id: UserId) -> Result<String, String> {
    let id = move || id;
    Ok(format!("{name}{}{:?}", name.len(), id()))
}

#[retry(immediate, attempts = 2)]
pub async fn generic_copy<T: Copy + Into<u64>>(value: T) -> Result<u64, String> {
    Ok(value.into() + Into::<u64>::into(value))
}

fn main() {
    assert_eq!(copy_argument(UserId(2), 1), Ok(5));
    assert_eq!(cloned("ab".to_owned()), Ok(2));
    assert_eq!(rebound("abc".to_owned()), Ok(3));
    assert_eq!(borrowed("a".to_owned(), UserId(1)), Ok("a1UserId(1)".to_owned()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    assert_eq!(rt.block_on(generic_copy(3u32)), Ok(6));
}
