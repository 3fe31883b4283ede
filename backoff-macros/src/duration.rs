//! Duration literals: `"250ms"`, `"1.5s"`, `"2m"`, `"1m30s"`.
//!
//! A duration is one or more `number unit` parts, units from largest to
//! smallest and each at most once; units are `h m s ms us ns` (`µs` too).
//! Numbers may have a fraction. The value is computed exactly in
//! nanoseconds; anything finer than a nanosecond or larger than
//! `Duration::MAX` is an error.

use std::time::Duration;

const UNITS: &[(&str, u128)] = &[
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("µs", 1_000),
    ("ns", 1),
];

const FORMAT: &str = "a duration is a number and a unit (`h`, `m`, `s`, `ms`, `us`, `ns`), as in `\"250ms\"`, `\"1.5s\"` or `\"1m30s\"`";

/// Parses a duration literal's contents.
pub(crate) fn parse(text: &str) -> Result<Duration, String> {
    if text.trim().is_empty() {
        return Err(format!("empty duration; {FORMAT}"));
    }
    if text.starts_with('-') {
        return Err(format!("`\"{text}\"`: a duration cannot be negative"));
    }
    let mut rest = text;
    let mut total: u128 = 0;
    let mut last_rank: Option<usize> = None;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
            .unwrap_or(rest.len());
        let number = &rest[..digits];
        rest = &rest[digits..];
        if number.is_empty() {
            return Err(format!("`\"{text}\"` is not a duration; {FORMAT}"));
        }
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].trim();
        rest = &rest[unit_len..];
        if unit.is_empty() {
            return Err(format!(
                "`\"{text}\"` has no unit; write `\"{number}ms\"` or `\"{number}s\"`"
            ));
        }
        let Some(rank) = UNITS.iter().position(|(u, _)| *u == unit) else {
            return Err(format!("unknown unit `{unit}` in `\"{text}\"`; {FORMAT}"));
        };
        let rank = if unit == "µs" { rank - 1 } else { rank };
        if last_rank.is_some_and(|last| rank <= last) {
            return Err(format!(
                "`\"{text}\"`: write units from largest to smallest, each once, as in `\"1m30s\"`"
            ));
        }
        last_rank = Some(rank);
        let nanos = scale(number, UNITS[rank].1)
            .ok_or_else(|| format!("`\"{text}\"`: `{number}` is not a number"))?;
        let Some(nanos) = nanos else {
            return Err(format!(
                "`\"{text}\"` is finer than a nanosecond; durations have nanosecond resolution"
            ));
        };
        total = total.checked_add(nanos).ok_or_else(|| too_long(text))?;
    }
    let secs = u64::try_from(total / 1_000_000_000).map_err(|_| too_long(text))?;
    Ok(Duration::new(secs, (total % 1_000_000_000) as u32))
}

fn too_long(text: &str) -> String {
    format!("`\"{text}\"` is too long; the longest duration is about 584 942 417 355 years")
}

/// `number · unit` in nanoseconds, exactly: `None` if `number` is malformed,
/// `Some(None)` if it has a fraction of a nanosecond. Saturates far beyond
/// `Duration::MAX`, which the caller rejects.
fn scale(number: &str, unit: u128) -> Option<Option<u128>> {
    let number: String = number.chars().filter(|c| *c != '_').collect();
    let (int, frac) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number.as_str(), ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.chars().all(|c| c.is_ascii_digit()) || !frac.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut nanos: u128 = 0;
    for c in int.chars() {
        let digit = u128::from(c.to_digit(10)?);
        nanos = nanos.saturating_mul(10).saturating_add(digit);
    }
    nanos = nanos.saturating_mul(unit);
    let mut place = unit;
    for c in frac.chars() {
        let digit = u128::from(c.to_digit(10)?);
        if digit != 0 && place < 10 {
            return Some(None);
        }
        place /= 10;
        nanos = nanos.saturating_add(digit * place);
    }
    Some(Some(nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> u128 {
        parse(text).unwrap().as_nanos() / 1_000_000
    }

    #[test]
    fn parses_the_spec_examples() {
        assert_eq!(ms("250ms"), 250);
        assert_eq!(ms("1.5s"), 1500);
        assert_eq!(ms("2m"), 120_000);
        assert_eq!(ms("1m30s"), 90_000);
        assert_eq!(ms("1h"), 3_600_000);
        assert_eq!(parse("7ns").unwrap(), Duration::from_nanos(7));
        assert_eq!(parse("3us").unwrap(), Duration::from_micros(3));
        assert_eq!(parse("3µs").unwrap(), Duration::from_micros(3));
        assert_eq!(parse("0.001ms").unwrap(), Duration::from_micros(1));
        assert_eq!(ms("1_000ms"), 1000);
        assert_eq!(ms("0s"), 0);
    }

    #[test]
    fn rejects_bad_durations_with_reasons() {
        for (text, expect) in [
            ("", "empty"),
            ("100", "no unit"),
            ("1.5.3s", "not a number"),
            ("10 parsecs", "unknown unit"),
            ("-1s", "negative"),
            ("30s1m", "largest to smallest"),
            ("1s1s", "largest to smallest"),
            ("0.5ns", "finer than a nanosecond"),
            ("99999999999999999999999h", "too long"),
            ("ms", "not a duration"),
            (".s", "not a number"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expect), "{text:?}: {err}");
        }
    }

    #[test]
    fn accepts_the_longest_duration() {
        assert_eq!(parse("18446744073709551615s").unwrap().as_secs(), u64::MAX);
        assert!(parse("18446744073709551616s").is_err());
    }
}
