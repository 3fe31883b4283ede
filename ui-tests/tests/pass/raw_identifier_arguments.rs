// A raw identifier is its name: `r#attempts` is `attempts`.
use backoff_runtime::retry;

#[retry(immediate, r#attempts = 2, r#when = |_: &()| true)]
fn f() -> Result<(), ()> { Err(()) }

fn main() {
    assert_eq!(f(), Err(()));
}
