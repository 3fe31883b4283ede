//! Every compile-fail case of the `#[retry]` attribute (`ui-tests/tests/fail`)
//! whose attribute holds only a schedule: `parse` of its text gives the
//! attribute's messages, at the same places (the `.stderr`'s line, column
//! and carets, as byte ranges of the text); where the attribute's errors are
//! all outside it, `parse` accepts the text.

use std::fs;
use std::path::Path;

/// Whether `name` is an argument of the attribute alone, not of a schedule
/// text.
fn not_schedule(name: &str) -> bool {
    use backoff_schedule::macro_support::{OTHER_ARGUMENTS, SCHEDULE_ARGUMENTS};
    OTHER_ARGUMENTS.contains(&name) && !SCHEDULE_ARGUMENTS.contains(&name)
}

/// `(message, start, end)`, byte offsets in the case's file.
type Found = (String, usize, usize);

/// Each `#[retry(..)]` of `source`: its arguments' byte range.
fn attributes(source: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    for (at, _) in source.match_indices("retry(") {
        let before =
            source[..at].trim_end_matches(|c: char| c.is_alphanumeric() || c == '_' || c == ':');
        if !before.ends_with("#[") {
            continue;
        }
        let start = at + "retry(".len();
        let mut depth = 1;
        let mut in_string = false;
        let mut escaped = false;
        for (i, c) in source[start..].char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_string => escaped = true,
                '"' => in_string = !in_string,
                '(' | '[' | '{' if !in_string => depth += 1,
                ')' | ']' | '}' if !in_string => {
                    depth -= 1;
                    if depth == 0 {
                        found.push((start, start + i));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    found
}

/// The top-level names of an attribute's arguments.
fn top_level_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0;
    let mut in_string = false;
    let mut at_start = true;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            _ if in_string => {}
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                at_start = true;
                continue;
            }
            c if at_start && depth == 0 && (c.is_alphabetic() || c == '_') => {
                let rest = &text[i..];
                let rest = rest.strip_prefix("r#").unwrap_or(rest);
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                names.push(rest[..end].to_owned());
            }
            c if c.is_whitespace() => continue,
            _ => {}
        }
        at_start = false;
    }
    names
}

/// The byte offset of 1-based `line` and `column` (in chars) of `source`.
fn offset(source: &str, line: usize, column: usize) -> Option<usize> {
    let start: usize = source
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum();
    let text = source.split_inclusive('\n').nth(line - 1)?;
    let within = text
        .char_indices()
        .nth(column - 1)
        .map_or(text.len(), |(i, _)| i);
    Some(start + within)
}

/// The errors of a `.stderr` without an error code whose span is on one
/// line (rustc draws it with carets); `None` for one over several lines.
fn stderr_errors(stderr: &str, source: &str) -> Vec<Option<Found>> {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(message) = line.strip_prefix("error: ") else {
            continue;
        };
        if message.starts_with("aborting") || message.starts_with("could not compile") {
            continue;
        }
        let Some(at) = lines
            .get(i + 1)
            .and_then(|l| l.trim_start().strip_prefix("--> "))
        else {
            continue;
        };
        let mut parts = at.rsplitn(3, ':');
        let (Some(col), Some(row)) = (parts.next(), parts.next()) else {
            continue;
        };
        let (Ok(col), Ok(row)) = (col.parse::<usize>(), row.parse::<usize>()) else {
            continue;
        };
        // The source line, then the carets under it.
        let carets = lines[i + 2..].iter().take(4).find_map(|l| {
            let after = l.split_once('|')?.1;
            let trimmed = after.trim_start();
            trimmed
                .starts_with('^')
                .then(|| trimmed.chars().take_while(|c| *c == '^').count())
        });
        let multi = lines[i + 2..]
            .iter()
            .take(3)
            .any(|l| l.contains("| /") || l.contains("|  _"));
        let (Some(n), false) = (carets, multi) else {
            found.push(None);
            continue;
        };
        let Some(start) = offset(source, row, col) else {
            continue;
        };
        let end = offset(source, row, col + n).unwrap_or(start);
        found.push(Some((message.to_owned(), start, end)));
    }
    found
}

#[test]
fn every_ui_failure_of_a_schedule_text_has_the_attributes_message_and_span() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui-tests/tests/fail");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .expect("the ui cases")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let (mut compared, mut accepted, mut mismatches) = (0, 0, Vec::new());
    for file in files {
        let source = fs::read_to_string(&file).unwrap();
        let Ok(stderr) = fs::read_to_string(file.with_extension("stderr")) else {
            continue;
        };
        let errors = stderr_errors(&stderr, &source);
        for (start, end) in attributes(&source) {
            let text = &source[start..end];
            let names = top_level_names(text);
            if text.contains('$') || names.iter().any(|n| not_schedule(n)) {
                continue;
            }
            // The attribute's errors inside this text (none over several
            // lines, which the test cannot place).
            let mut inside = Vec::new();
            let mut unplaced = false;
            for e in &errors {
                match e {
                    Some((m, s, e)) if *s >= start && *e <= end => {
                        inside.push((m.clone(), s - start, e - start));
                    }
                    Some(_) => {}
                    None => unplaced = true,
                }
            }
            if unplaced {
                continue;
            }
            let got: Vec<(String, usize, usize)> = match backoff_schedule::parse(text) {
                Ok(_) => Vec::new(),
                Err(e) => e
                    .errors()
                    .iter()
                    .map(|e| (e.message().to_owned(), e.span().start, e.span().end))
                    .collect(),
            };
            let (mut want, mut have) = (inside.clone(), got.clone());
            want.sort();
            have.sort();
            if want.is_empty() {
                accepted += 1;
            } else {
                compared += 1;
            }
            // (A text cannot name a `static` `Jitterer`, which the
            // attribute takes.)
            let static_jitterer = want.is_empty()
                && have.len() == 1
                && have[0]
                    .0
                    .starts_with("a schedule text cannot name a `static`");
            if want != have && !static_jitterer {
                mismatches.push(format!(
                    "{}: `{text}`\n  attribute: {want:?}\n  parse:     {have:?}",
                    file.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    println!("{compared} failing schedule texts compared, {accepted} accepted texts");
    assert!(compared > 50, "only {compared} cases compared");
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
