//! Lints the function has without `#[retry]` still fire with it: each
//! `#[expect(..)]` here fails the build (`unfulfilled_lint_expectations`,
//! denied by `-D warnings`) if the expansion hid its lint.

use backoff_runtime::retry;

// (No doc comment, on purpose: `missing_docs` must fire on the function.)
#[retry(immediate, attempts = 2)]
#[expect(missing_docs, reason = "checks that the lint fires under #[retry]")]
pub fn undocumented(x: u32) -> Result<u32, u32> {
    Ok(x)
}

/// An unneeded `return`.
#[retry(immediate, attempts = 2)]
#[expect(
    clippy::needless_return,
    reason = "checks that the lint fires under #[retry]"
)]
pub fn needless_return(x: u32) -> Result<u32, u32> {
    return Ok(x);
}

/// An unneeded `return`, `async`.
#[retry(immediate, attempts = 2)]
#[expect(
    clippy::needless_return,
    reason = "checks that the lint fires under #[retry]"
)]
pub async fn needless_return_async(x: u32) -> Result<u32, u32> {
    return Ok(x);
}

/// A large error: reported on the function, once (not also on the closure
/// the body runs in).
#[retry(immediate, attempts = 2)]
#[expect(
    clippy::result_large_err,
    reason = "checks that the lint fires under #[retry]"
)]
pub fn large_error(x: u32) -> Result<u32, [u8; 1024]> {
    Ok(x)
}

/// No `# Safety` section.
#[retry(immediate, attempts = 2)]
#[expect(
    clippy::missing_safety_doc,
    reason = "checks that the lint fires under #[retry]"
)]
#[expect(unsafe_code, reason = "an `unsafe fn` is the shape under test")]
pub unsafe fn unsafe_without_safety_doc(x: u32) -> Result<u32, u32> {
    Ok(x)
}

/// A `mut` that is not needed, on a `&mut` parameter (which `#[retry]`
/// reborrows per attempt).
#[retry(immediate, attempts = 2)]
#[expect(unused_mut, reason = "checks that the lint fires under #[retry]")]
pub fn unused_mut(mut dst: &mut [u8]) -> Result<usize, u32> {
    Ok(dst.len())
}

/// An unused parameter.
#[retry(immediate, attempts = 2)]
#[expect(unused_variables, reason = "checks that the lint fires under #[retry]")]
pub fn unused_parameter(x: u32, unused: &mut u32) -> Result<u32, u32> {
    Ok(x)
}

/// A `&mut Vec` that only needs a slice.
#[retry(immediate, attempts = 2)]
#[expect(clippy::ptr_arg, reason = "checks that the lint fires under #[retry]")]
pub fn first_byte(bytes: &mut Vec<u8>) -> Result<u8, u32> {
    bytes.first().copied().ok_or(0)
}

/// A `&mut` parameter named with a leading underscore: the per-attempt
/// reborrow (`let _writer = &mut *_writer;`) adds no pedantic
/// `used_underscore_binding` or `no_effect_underscore_binding`, on the
/// runtime's loop and on the function's own.
#[retry(immediate, attempts = 2)]
#[warn(clippy::used_underscore_binding, clippy::no_effect_underscore_binding)]
pub fn underscore_writer(mut _writer: &mut Vec<u8>) -> Result<u32, u32> {
    Ok(1)
}

/// The same, on the function's own loop (a hook).
#[retry(immediate, attempts = 2, on_retry = |_, _| ())]
#[warn(clippy::used_underscore_binding, clippy::no_effect_underscore_binding)]
pub fn underscore_writer_hooked(mut _writer: &mut Vec<u8>) -> Result<u32, u32> {
    Ok(1)
}

/// The same, `async`.
#[retry(immediate, attempts = 2)]
#[warn(clippy::used_underscore_binding, clippy::no_effect_underscore_binding)]
pub async fn underscore_writer_async(mut _writer: &mut Vec<u8>) -> Result<u32, u32> {
    Ok(1)
}

/// Lifetimes that elision would give: `clippy::needless_lifetimes` fires
/// under `#[retry]` as without it.
#[retry(immediate, attempts = 2)]
#[expect(
    clippy::needless_lifetimes,
    reason = "checks that the lint fires under #[retry]"
)]
pub fn needless_lifetimes<'a>(x: &'a str) -> Result<&'a str, u8> {
    x.strip_prefix('a').ok_or(1)
}

/// A named lifetime that could be `'_` (pedantic).
pub struct Words<'a>(&'a str);

/// Its length.
#[retry(immediate, attempts = 2)]
#[expect(
    clippy::elidable_lifetime_names,
    reason = "checks that the lint fires under #[retry]"
)]
pub fn words_len<'a>(words: &Words<'a>) -> Result<usize, u8> {
    words.0.len().checked_sub(1).ok_or(0)
}

// The lints `#[retry]` hides, each documented with its reason in
// docs/guide.md ("Lints the attribute hides"), which a test compares with
// this list: each function below would have its lint without the
// attribute, and `-D warnings` fails the build the day one fires again
// (then remove it here and from the guide).

/// A closure inside a plain fn's body with a large error
/// (`clippy::result_large_err`: the attempts are a closure returning the
/// function's `Result`, whose lint level covers closures nested in it).
#[retry(immediate, attempts = 2)]
#[warn(clippy::result_large_err)]
pub fn hidden_large_error_closure(x: u32) -> Result<u32, u32> {
    let parse = |v: u32| -> Result<u32, [u8; 1024]> { v.checked_add(1).ok_or([0; 1024]) };
    parse(x).map_err(|e| u32::from(e[0]))
}

/// A list item whose next line is
/// a lazy continuation (`clippy::doc_lazy_continuation`: an attribute
/// receives `///` lines as `#[doc = ".."]`, which the lint does not read).
///
/// - one item
/// continued lazily
#[retry(immediate, attempts = 2)]
#[warn(clippy::doc_lazy_continuation)]
pub fn hidden_lazy_continuation(x: u32) -> Result<u32, u32> {
    x.checked_sub(1).ok_or(0)
}

/// A private function that always returns `Ok`
/// (`clippy::unnecessary_wraps`, pedantic: the lint reads the values the
/// body returns, which under `#[retry]` are the loop's).
#[retry(immediate, attempts = 2)]
#[warn(clippy::unnecessary_wraps)]
fn hidden_unnecessary_wraps(x: u32) -> Result<u32, u32> {
    Ok(x)
}

/// Calls the private function above, which is otherwise unused.
pub fn calls_hidden_unnecessary_wraps() -> Result<u32, u32> {
    hidden_unnecessary_wraps(1)
}
