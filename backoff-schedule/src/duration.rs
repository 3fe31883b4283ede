//! Duration literals: `"250ms"`, `"1.5s"`, `"2m"`, `"1m30s"`.
//!
//! A duration is one or more `number unit` parts, units from largest to
//! smallest and each at most once, without spaces; units are
//! `h m s ms us ns` (`µs` too).
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

/// Units other libraries and people write, and the duration each stands for
/// in nanoseconds, for the "write `ms`" hint.
const ALIASES: &[(&[&str], u128)] = &[
    (&["sec", "secs", "second", "seconds"], 1_000_000_000),
    (
        &[
            "msec",
            "msecs",
            "milli",
            "millis",
            "millisecond",
            "milliseconds",
        ],
        1_000_000,
    ),
    (
        &[
            "usec",
            "usecs",
            "micro",
            "micros",
            "microsecond",
            "microseconds",
            "\u{3bc}s",
        ],
        1_000,
    ),
    (
        &[
            "nsec",
            "nsecs",
            "nano",
            "nanos",
            "nanosecond",
            "nanoseconds",
        ],
        1,
    ),
    (&["min", "mins", "minute", "minutes"], 60_000_000_000),
    (&["hr", "hrs", "hour", "hours"], 3_600_000_000_000),
    (&["d", "day", "days"], 86_400_000_000_000),
    (&["w", "wk", "week", "weeks"], 604_800_000_000_000),
];

/// One `number unit` part of a duration, as written.
struct Part<'a> {
    number: &'a str,
    unit: &'a str,
}

/// Splits a duration without whitespace into its parts.
fn split(compact: &str) -> Option<Vec<Part<'_>>> {
    let mut parts = Vec::new();
    let mut rest = compact;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
            .unwrap_or(rest.len());
        let number = &rest[..digits];
        rest = &rest[digits..];
        if number.is_empty() {
            return None;
        }
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        parts.push(Part {
            number,
            unit: &rest[..unit_len],
        });
        rest = &rest[unit_len..];
    }
    Some(parts)
}

/// The nanoseconds of a unit (`µs` and `us` alike).
fn unit_nanos(unit: &str) -> Option<(usize, u128)> {
    let rank = UNITS.iter().position(|(u, _)| *u == unit)?;
    let rank = if unit == "µs" { rank - 1 } else { rank };
    Some((rank, UNITS[rank].1))
}

/// Parses a duration literal's contents.
///
/// Whitespace is never part of a duration: `"1m 30s"` and `"10 ms"` are
/// errors that show the spelling without spaces.
pub fn parse(text: &str) -> Result<Duration, String> {
    if text.trim().is_empty() {
        return Err(format!("empty duration; {FORMAT}"));
    }
    if text.trim_start().starts_with('-') {
        return Err(format!("`\"{text}\"`: a duration cannot be negative"));
    }
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(parts) = split(&compact) else {
        return Err(format!("`\"{text}\"` is not a duration; {FORMAT}"));
    };
    let mut total: u128 = 0;
    let mut last_rank: Option<usize> = None;
    for (i, part) in parts.iter().enumerate() {
        let Part { number, unit } = *part;
        if let Some(fixed) = without_exponent(&parts, i) {
            let hint = if fixed.is_empty() {
                FORMAT.to_owned()
            } else if parse(&fixed).is_ok() {
                format!("write `\"{fixed}\"`")
            } else if fixed.ends_with(|c: char| c.is_ascii_digit()) {
                format!("write `\"{fixed}ms\"` or `\"{fixed}s\"`")
            } else {
                FORMAT.to_owned()
            };
            return Err(format!(
                "`\"{text}\"`: a duration takes no exponent; {hint}"
            ));
        }
        if unit.is_empty() {
            return Err(no_unit(text, number, last_rank));
        }
        let Some((rank, nanos_per_unit)) = unit_nanos(unit) else {
            let hint = match respelled(&parts) {
                Some(fixed) => format!("write `\"{fixed}\"`"),
                None => FORMAT.to_owned(),
            };
            return Err(format!("unknown unit `{unit}` in `\"{text}\"`; {hint}"));
        };
        if last_rank.is_some_and(|last| rank <= last) {
            return Err(format!(
                "`\"{text}\"`: write units from largest to smallest, each once, as in `\"1m30s\"`"
            ));
        }
        last_rank = Some(rank);
        let nanos = scale(number, nanos_per_unit)
            .ok_or_else(|| format!("`\"{text}\"`: `{number}` is not a number"))?;
        let Some(nanos) = nanos else {
            return Err(format!(
                "`\"{text}\"` is finer than a nanosecond; durations have nanosecond resolution"
            ));
        };
        total = total.checked_add(nanos).ok_or_else(|| too_long(text))?;
    }
    let secs = u64::try_from(total / 1_000_000_000).map_err(|_| too_long(text))?;
    if compact != text {
        return Err(format!(
            "`\"{text}\"`: write a duration without spaces: `\"{compact}\"`"
        ));
    }
    Ok(Duration::new(secs, (total % 1_000_000_000) as u32))
}

/// The message for a number without a unit: the next smaller unit after
/// another part (`"1m30"` → `"1m30s"`), else milliseconds or seconds.
fn no_unit(text: &str, number: &str, last_rank: Option<usize>) -> String {
    let number = tidy_number(number);
    match last_rank {
        Some(rank) => match UNITS[rank + 1..].iter().find(|(u, _)| *u != "µs") {
            Some((next, _)) => format!(
                "`\"{text}\"`: `{number}` has no unit; write `\"{}{next}\"`",
                text.trim_end()
            ),
            None => format!("`\"{text}\"`: `{number}` has no unit, and nothing is finer than `ns`"),
        },
        None => format!("`\"{text}\"` has no unit; write `\"{number}ms\"` or `\"{number}s\"`"),
    }
}

/// `1.` → `1`, `.5` → `0.5`: a number as it reads in a suggestion.
fn tidy_number(number: &str) -> String {
    let number = number.strip_suffix('.').unwrap_or(number);
    if number.starts_with('.') {
        format!("0{number}")
    } else {
        number.to_owned()
    }
}

/// When part `i` is a mantissa followed by an exponent (`"1e3ms"` splits
/// into `1 e` and `3 ms`): the whole duration with the number written out,
/// or an empty string if it is too long to write out.
fn without_exponent(parts: &[Part<'_>], i: usize) -> Option<String> {
    let part = &parts[i];
    let sign = match part.unit {
        "e" | "E" | "e+" | "E+" => 1,
        "e-" | "E-" => -1,
        _ => return None,
    };
    let exponent = parts.get(i + 1)?;
    let Some(number) = exponent
        .number
        .replace('_', "")
        .parse::<i64>()
        .ok()
        .and_then(|power| shift(part.number, sign * power))
    else {
        return Some(String::new());
    };
    let mut fixed = String::new();
    for p in &parts[..i] {
        fixed.push_str(p.number);
        fixed.push_str(p.unit);
    }
    fixed.push_str(&number);
    fixed.push_str(exponent.unit);
    for p in &parts[i + 2..] {
        fixed.push_str(p.number);
        fixed.push_str(p.unit);
    }
    Some(fixed)
}

/// `number · 10^power`, written out in decimal (`1.5`, 3 → `1500`).
fn shift(number: &str, power: i64) -> Option<String> {
    if power.abs() > 30 {
        return None;
    }
    let number: String = number.chars().filter(|c| *c != '_').collect();
    let (int, frac) = number.split_once('.').unwrap_or((&number, ""));
    let digits = format!("{int}{frac}");
    let point = i64::try_from(int.len()).ok()? + power;
    let len = i64::try_from(digits.len()).ok()?;
    let (int, frac) = if point <= 0 {
        (
            "0".to_owned(),
            format!("{}{digits}", "0".repeat(usize::try_from(-point).ok()?)),
        )
    } else if point >= len {
        (
            format!("{digits}{}", "0".repeat(usize::try_from(point - len).ok()?)),
            String::new(),
        )
    } else {
        let at = usize::try_from(point).ok()?;
        (digits[..at].to_owned(), digits[at..].to_owned())
    };
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let frac = frac.trim_end_matches('0');
    Some(if frac.is_empty() {
        int.to_owned()
    } else {
        format!("{int}.{frac}")
    })
}

/// The duration respelled with our units (`"500MS"` → `"500ms"`,
/// `"100msec"` → `"100ms"`, `"1d"` → `"24h"`, `"1d12h"` → `"36h"`), if every
/// unit has a known spelling.
fn respelled(parts: &[Part<'_>]) -> Option<String> {
    let fixed = respelled_parts(parts)?;
    if parse(&fixed).is_ok() {
        return Some(fixed);
    }
    // Units out of order once respelled (`"1d12h"` → `"24h12h"`): the total.
    let mut total: u128 = 0;
    for part in parts {
        let lower = part.unit.to_lowercase();
        let per_unit = match unit_nanos(part.unit).or_else(|| unit_nanos(&lower)) {
            Some((_, nanos)) => nanos,
            None => {
                ALIASES
                    .iter()
                    .find(|(names, _)| names.contains(&lower.as_str()))?
                    .1
            }
        };
        total = total.checked_add(scale(part.number, per_unit)??)?;
    }
    let fixed = format(Duration::from_nanos(u64::try_from(total).ok()?));
    parse(&fixed).is_ok().then_some(fixed)
}

/// Each part with our spelling of its unit, days and weeks in hours.
fn respelled_parts(parts: &[Part<'_>]) -> Option<String> {
    let mut fixed = String::new();
    for part in parts {
        if unit_nanos(part.unit).is_some() {
            fixed.push_str(part.number);
            fixed.push_str(part.unit);
            continue;
        }
        let lower = part.unit.to_lowercase();
        if let Some((ours, _)) = UNITS.iter().find(|(u, _)| *u == lower) {
            fixed.push_str(part.number);
            fixed.push_str(ours);
            continue;
        }
        let nanos = ALIASES
            .iter()
            .find(|(names, _)| names.contains(&lower.as_str()))?
            .1;
        match UNITS.iter().find(|(_, n)| *n == nanos) {
            Some((ours, _)) => {
                fixed.push_str(part.number);
                fixed.push_str(ours);
            }
            // Days and weeks: in hours.
            None => {
                let nanos = scale(part.number, nanos)??;
                fixed.push_str(&format(Duration::from_nanos(u64::try_from(nanos).ok()?)));
            }
        }
    }
    Some(fixed)
}

/// A duration as a literal: `"1m30s"`, `"1.5s"`, `"100ms"`, `"0s"`.
pub fn format(d: Duration) -> String {
    const SECOND: u128 = 1_000_000_000;
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}us", decimal(nanos, 1_000));
    }
    if nanos < SECOND {
        return format!("{}ms", decimal(nanos, 1_000_000));
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = nanos % 3_600_000_000_000 / 60_000_000_000;
    let seconds = nanos % 60_000_000_000;
    let mut out = String::new();
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    if seconds > 0 {
        out.push_str(&format!("{}s", decimal(seconds, SECOND)));
    }
    out
}

/// `n / unit` in decimal, without trailing zeros.
fn decimal(n: u128, unit: u128) -> String {
    let (int, frac) = (n / unit, n % unit);
    if frac == 0 {
        return int.to_string();
    }
    let width = unit.ilog10() as usize;
    let frac = format!("{frac:0width$}");
    format!("{int}.{}", frac.trim_end_matches('0'))
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
            ("10 parsecs", "unknown unit `parsecs`"),
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
    fn suggests_the_literal_meant() {
        for (text, expect) in [
            ("1m30", "write `\"1m30s\"`"),
            ("2h5", "write `\"2h5m\"`"),
            ("1.", "write `\"1ms\"` or `\"1s\"`"),
            (".5", "write `\"0.5ms\"` or `\"0.5s\"`"),
            ("1e3ms", "no exponent; write `\"1000ms\"`"),
            ("1.5e3ms", "write `\"1500ms\"`"),
            ("2e-3s", "write `\"0.002s\"`"),
            ("1e3", "no exponent; write `\"1000ms\"` or `\"1000s\"`"),
            (
                "500MS",
                "unknown unit `MS` in `\"500MS\"`; write `\"500ms\"`",
            ),
            ("100msec", "write `\"100ms\"`"),
            ("1d", "write `\"24h\"`"),
            ("1d12h", "write `\"36h\"`"),
            ("1e400s", "no exponent; a duration is"),
            ("1.5d", "write `\"36h\"`"),
            ("90 seconds", "write `\"90s\"`"),
            ("1m 30s", "write a duration without spaces: `\"1m30s\"`"),
            ("10 ms", "without spaces: `\"10ms\"`"),
            (" 1s", "without spaces: `\"1s\"`"),
            ("1s ", "without spaces"),
            ("1 000ms", "without spaces: `\"1000ms\"`"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expect), "{text:?}: {err}");
        }
    }

    #[test]
    fn formats_durations_as_literals_that_parse_back() {
        for (nanos, text) in [
            (0, "0s"),
            (7, "7ns"),
            (1_500, "1.5us"),
            (100_000_000, "100ms"),
            (1_500_000_000, "1.5s"),
            (90_000_000_000, "1m30s"),
            (86_400_000_000_000, "24h"),
            (3_661_000_000_001, "1h1m1.000000001s"),
        ] {
            let d = Duration::from_nanos(nanos);
            assert_eq!(format(d), text);
            assert_eq!(parse(text).unwrap(), d);
        }
    }

    #[test]
    fn accepts_the_longest_duration() {
        assert_eq!(parse("18446744073709551615s").unwrap().as_secs(), u64::MAX);
        assert!(parse("18446744073709551616s").is_err());
    }
}
