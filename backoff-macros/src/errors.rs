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

/// The known name closest to `name`, if it is close enough to be a typo
/// (the schedule language's rule: optimal string alignment distance, at
/// most a third of the name's length, rustc's rule).
pub(crate) use backoff_schedule::macro_support::closest;

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
        assert_eq!(closest("dealy", &["delay"]), Some("delay"));
        // Never the word written: known, but not where it was written.
        assert_eq!(closest("after", &["after", "stop"]), None);
        let names = crate::attr::arguments();
        for name in names.iter().copied() {
            assert_ne!(closest(name, &names), Some(name));
        }
        // A value's typo, as an argument's.
        assert_eq!(
            closest("lasttry", &["give_up", "last_try"]),
            Some("last_try")
        );
    }

    /// Every one-edit typo of every argument name (neighbours swapped, a
    /// letter dropped, a letter doubled) is corrected to that name; a
    /// Levenshtein distance missed the swaps in short names (`wehn`,
    /// `slepe`, `carte`).
    #[test]
    fn corrects_every_single_typo_of_every_argument() {
        let names = crate::attr::arguments();
        for name in names.iter().copied() {
            let chars: Vec<char> = name.chars().collect();
            let mut typos = Vec::new();
            for i in 0..chars.len() {
                if i + 1 < chars.len() && chars[i] != chars[i + 1] {
                    let mut t = chars.clone();
                    t.swap(i, i + 1);
                    typos.push(t);
                }
                let mut dropped = chars.clone();
                dropped.remove(i);
                typos.push(dropped);
                let mut doubled = chars.clone();
                doubled.insert(i, chars[i]);
                typos.push(doubled);
            }
            for typo in typos {
                let typo: String = typo.into_iter().collect();
                if names.contains(&typo.as_str()) {
                    // (`throttle` is `throttled` less a letter, and an
                    // argument of its own.)
                    continue;
                }
                let found = closest(&typo, &names);
                if found != Some(name)
                    && found.is_some_and(|f| {
                        strsim::osa_distance(&typo, f) == strsim::osa_distance(&typo, name)
                    })
                {
                    // A tie (`throttlee` is one edit from `throttle` and
                    // from `throttled`): either is a fair guess.
                    continue;
                }
                assert_eq!(found, Some(name), "{typo}");
            }
        }
    }

    /// Words from other retry libraries get no "did you mean": they have
    /// messages of their own, and a near miss such as `max_retries` →
    /// `max_elapsed` (what a Jaro similarity above 0.8 suggests) misleads.
    #[test]
    fn suggests_nothing_for_unrelated_words() {
        let names = crate::attr::arguments();
        for word in [
            "retries",
            "max_retries",
            "max_attempts",
            "tries",
            "max_delay",
            "initial_delay",
            "multiplier",
            "delay",
            "backoff",
            "strategy",
            "jitter_ratio",
            "retry_if",
            "condition",
            "predicate",
            "notify",
            "retry",
            "time",
            "count",
            "limit",
            "interval",
            "x",
        ] {
            assert_eq!(closest(word, &names), None, "{word}");
        }
    }
}
