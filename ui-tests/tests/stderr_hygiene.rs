//! No pinned compiler output shows a user a name of the macro's internals:
//! `__private` (the runtime's hidden module), `__backoff_*` (the expansion's
//! locals), an `async block@...` (the expansion's futures), or the
//! runtime's internal names for the traits it checks values against (rustc
//! prints those under the names `backoff_runtime::retry_args` gives them,
//! which read as the argument). Checks every `.stderr` under `ui-tests/`,
//! the `no-tokio` cases included.

use std::path::{Path, PathBuf};

/// The runtime's hidden items the expansion names, by their own names,
/// matched as whole words: the checks' traits that `retry_args` does not
/// re-export under a name of the argument's, and the loop's own types.
/// (The checks' traits that `retry_args` re-exports under their own names,
/// such as `WhenParameter`, still appear in rustc's `help:` lines, which
/// name the trait whatever its `on_unimplemented` message says; see
/// `NAMED_IN_HELP`.)
const HIDDEN_ITEMS: [&str; 18] = [
    "AsyncSleep",
    "AsyncTimeout",
    "DefaultSleep",
    "DefaultSleeping",
    "BlockingSleepReturn",
    "WhenOkFn",
    "Never",
    "Holds",
    "Fails",
    "Unit",
    "Trace",
    "TraceDisplay",
    "TraceFallback",
    "FixedOrigin",
    "FixedStrategy",
    "Carried",
    "Capped",
    "OkOf",
];

/// The check traits that rustc's `help: the trait .. is not implemented`
/// lines name, and how many `.stderr` files may show each. rustc names the
/// trait in that line whatever its `on_unimplemented` message says, so the
/// runtime makes these public items: `backoff_runtime::retry_args`,
/// documented, each named after the argument it checks. The counts may
/// only go down, but for a new case that needs the trait.
const NAMED_IN_HELP: [(&str, usize); 19] = [
    ("WhenParameter", 4),
    ("WhenClassification", 1),
    ("WhenFn", 2),
    ("WhenOkParameter", 1),
    ("WhenOkReturn", 1),
    ("OnRetryFn", 1),
    ("OnRetryParameter", 1),
    ("OnRetryOutcomeParameter", 1),
    ("OnRetryEventParameter", 1),
    ("OnRetryReturn", 1),
    ("OnGiveUpFn", 1),
    ("OnGiveUpParameter", 1),
    ("OnGiveUpRecordParameter", 1),
    ("OnGiveUpReturn", 1),
    ("SleepFn", 1),
    ("SleepParameter", 2),
    ("AsyncSleepReturn", 3),
    ("FromElapsed", 4),
    ("FallbackFn", 2),
];

/// Whether `text` contains `word` as a whole word (not inside a longer
/// identifier such as `DefaultAsyncSleep`).
fn contains_word(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Besides the hidden names, no source line of the library's crates: a
/// `help:` or `note:` that quotes one (an impl rustc lists, a bound in the
/// runtime) points the user at code that is not theirs.
const FORBIDDEN: [&str; 13] = [
    "backoff-runtime/src",
    "backoff-redis/src",
    "backoff-opentelemetry/src",
    "{closure#",
    "__private",
    "__backoff",
    "async block@",
    "RetryResult",
    "ErrorOf",
    "AsPolicy",
    "AsBudget",
    "AsCircuit",
    "AsThrottle",
];

fn stderr_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("readable directory entry").path();
        if path.is_dir() {
            stderr_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "stderr") {
            found.push(path);
        }
    }
}

#[test]
fn no_stderr_names_the_macros_internals() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    stderr_files(&root.join("tests"), &mut files);
    stderr_files(&root.join("no-tokio/tests"), &mut files);
    files.sort();
    assert!(
        files.len() > 50,
        "found only {} .stderr files under {}",
        files.len(),
        root.display()
    );

    let mut leaking = Vec::new();
    let mut named_in_help = std::collections::BTreeMap::<&str, usize>::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable .stderr");
        let names: Vec<&str> = FORBIDDEN
            .iter()
            .copied()
            .filter(|name| text.contains(name))
            .chain(
                HIDDEN_ITEMS
                    .iter()
                    .copied()
                    .filter(|name| contains_word(&text, name)),
            )
            .collect();
        for (name, _) in NAMED_IN_HELP {
            if contains_word(&text, name) {
                *named_in_help.entry(name).or_insert(0) += 1;
            }
        }
        if !names.is_empty() {
            let relative = file.strip_prefix(root).expect("under ui-tests/");
            let relative = relative.to_string_lossy().replace('\\', "/");
            leaking.push((relative, names));
        }
    }

    let leaks: Vec<String> = leaking
        .iter()
        .map(|(file, names)| format!("{file}: {}", names.join(", ")))
        .collect();
    assert!(
        leaks.is_empty(),
        "compiler output that names the macro's internals:\n{}",
        leaks.join("\n")
    );
    let more: Vec<String> = NAMED_IN_HELP
        .iter()
        .filter_map(|&(name, most)| {
            let seen = named_in_help.get(name).copied().unwrap_or(0);
            (seen > most).then(|| format!("{name}: {seen} files (at most {most})"))
        })
        .collect();
    assert!(
        more.is_empty(),
        "hidden traits named in more `help:` lines than before:\n{}",
        more.join("\n")
    );
}
