//! The fuzzers' inputs, one generator for the fuzz pass of the attribute's
//! expansion (`backoff-macros`) and that of `Policy::parse`
//! (`backoff-runtime`): fragments of the grammar joined with commas, then
//! mutated (cut, spliced with noise, holed, repeated, swapped). For those
//! tests only (feature `fuzz`); not a stable API.

use core::ops::Range;

use proptest::prelude::*;

/// One change to a text, at character boundaries.
#[derive(Debug, Clone)]
pub enum Mutation {
    /// Cut at a point.
    Truncate(usize),
    /// Insert a piece of noise at a point.
    Insert(usize, &'static str),
    /// Delete up to n bytes from a point.
    Delete(usize, usize),
    /// Repeat up to n bytes from a point, this many times.
    Repeat(usize, usize, usize),
    /// Swap two characters.
    Swap(usize, usize),
}

/// `text` with `m` applied (each position taken modulo the text's length).
pub fn mutate(text: &str, m: &Mutation) -> String {
    let at = |i: usize| {
        let mut i = i % (text.len() + 1);
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let range = |i: usize, n: usize| {
        let (a, b) = (at(i), at(i.saturating_add(n)));
        (a.min(b), a.max(b))
    };
    match *m {
        Mutation::Truncate(i) => text[..at(i)].to_owned(),
        Mutation::Insert(i, s) => format!("{}{s}{}", &text[..at(i)], &text[at(i)..]),
        Mutation::Delete(i, n) => {
            let (a, b) = range(i, n);
            format!("{}{}", &text[..a], &text[b..])
        }
        Mutation::Repeat(i, n, times) => {
            let (a, b) = range(i, n);
            format!("{}{}{}", &text[..a], text[a..b].repeat(times), &text[b..])
        }
        Mutation::Swap(a, b) => {
            let mut chars: Vec<char> = text.chars().collect();
            if !chars.is_empty() {
                let len = chars.len();
                chars.swap(a % len, b % len);
            }
            chars.into_iter().collect()
        }
    }
}

/// A mutation, its noise drawn from `noise`, repeating a stretch fewer
/// than `repeats` times.
pub fn mutation(noise: &'static [&'static str], repeats: usize) -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), proptest::sample::select(noise)).prop_map(|(i, s)| Mutation::Insert(i, s)),
        (any::<usize>(), 0usize..20).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), 0usize..20, 0..repeats.max(1))
            .prop_map(|(i, n, t)| Mutation::Repeat(i, n, t)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
    ]
}

/// Texts: `count` fragments drawn from `fragments`, joined with `, `, then
/// up to three mutations with `noise` and `repeats` (none in a quarter of
/// the texts).
pub fn texts(
    fragments: &'static [&'static str],
    count: Range<usize>,
    noise: &'static [&'static str],
    repeats: usize,
) -> impl Strategy<Value = String> {
    let joined = proptest::collection::vec(proptest::sample::select(fragments), count)
        .prop_map(|f| f.join(", "));
    (
        joined,
        proptest::collection::vec(mutation(noise, repeats), 0..4),
    )
        .prop_map(|(text, ms)| ms.iter().fold(text, |text, m| mutate(&text, m)))
}
