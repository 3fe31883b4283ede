//! Serializers writing into a caller's buffer (regex-automata's
//! `write_to`, `fmt::Display`, `io::Write` helpers): `&mut` arguments,
//! re-pointed as they are filled.

use std::fmt;
use std::io::{self, Write};

use backoff_runtime::retry;

/// Too small a buffer.
#[derive(Debug, PartialEq, Eq)]
pub struct BufferTooSmall {
    /// Bytes needed.
    pub needed: usize,
}

/// Writes `words` as little-endian `u32`s, re-pointing `dst` past each one
/// (regex-automata's serializer shape). Each attempt starts from the whole
/// buffer: `dst` is reborrowed per attempt.
#[retry(immediate, attempts = 2)]
pub fn write_words(mut dst: &mut [u8], words: &[u32]) -> Result<usize, BufferTooSmall> {
    let needed = words.len() * 4;
    if dst.len() < needed {
        return Err(BufferTooSmall { needed });
    }
    for word in words {
        dst[..4].copy_from_slice(&word.to_le_bytes());
        dst = &mut dst[4..];
    }
    Ok(needed)
}

/// Writes twice through the same `&mut` (a header, then the final value):
/// no `unused_assignments` warning.
#[retry(immediate, attempts = 2)]
pub fn reset_then_count(out: &mut usize, items: &[u8]) -> Result<(), BufferTooSmall> {
    *out = 0;
    *out = items.len();
    Ok(())
}

/// A `fmt::Result` function writing into a `&mut Formatter`.
#[retry(immediate, attempts = 2)]
pub fn write_list(f: &mut fmt::Formatter<'_>, items: &[u32]) -> fmt::Result {
    let mut first = true;
    for item in items {
        if !first {
            f.write_str(", ")?;
        }
        first = false;
        write!(f, "{item}")?;
    }
    Ok(())
}

/// An `io::Write` sink taken as `impl Write` by `&mut`.
#[retry(immediate, attempts = 2)]
pub fn write_line(out: &mut impl Write, line: &str) -> io::Result<()> {
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")
}

/// `Display` through [`write_list`].
#[derive(Debug)]
pub struct List(pub Vec<u32>);

impl fmt::Display for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_list(f, &self.0)
    }
}

/// A body that starts with an item, and a `&mut` argument (reborrowed):
/// no `clippy::items_after_statements` from the expansion.
#[retry(immediate, attempts = 2)]
#[warn(clippy::items_after_statements)]
pub fn write_greeting(out: &mut String) -> Result<(), fmt::Error> {
    use std::fmt::Write as _;
    write!(out, "hello")
}
