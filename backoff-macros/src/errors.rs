//! Collecting errors so a user sees every mistake at once (serde's `Ctxt`),
//! and the "did you mean" helper.

/// Errors gathered while parsing and checking one attribute.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    /// Records an error.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(first) => first.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// All errors combined, if any.
    pub(crate) fn finish(self) -> syn::Result<()> {
        match self.0 {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The known name closest to `name`, if it is close enough to be a typo.
pub(crate) fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (distance(name, k), *k))
        .filter(|(d, k)| *d <= threshold(k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Whether `name` is a likely typo of `known`.
pub(crate) fn close(name: &str, known: &str) -> bool {
    distance(name, known) <= threshold(known)
}

fn threshold(known: &str) -> usize {
    (known.chars().count() / 3).max(1)
}

/// Levenshtein distance, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let known = ["attempts", "jitter", "max_elapsed", "when"];
        assert_eq!(closest("attempt", &known), Some("attempts"));
        assert_eq!(closest("jiter", &known), Some("jitter"));
        assert_eq!(closest("max_elapse", &known), Some("max_elapsed"));
        assert_eq!(closest("retries", &known), None);
        assert_eq!(closest("wen", &known), Some("when"));
        assert!(close("unlimted", "unlimited"));
    }
}
