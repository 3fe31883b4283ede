//! No pinned compiler output shows a user a name of the macro's internals:
//! `__private` (the runtime's hidden module), `__backoff_*` (the expansion's
//! locals) or an `async block@...` (the expansion's futures). Checks every
//! `.stderr` under `ui-tests/`, the `no-tokio` cases included.

use std::path::{Path, PathBuf};

const FORBIDDEN: [&str; 3] = ["__private", "__backoff", "async block@"];

/// The cases whose message still names an internal, each a known defect of
/// the expansion (a type error rustc reports inside the generated code), not
/// of the attribute's parsing. Paths are relative to `ui-tests/`.
///
/// This list only shrinks: fix the expansion, re-bless the case, remove its
/// entry. The test fails on a leak in a file not listed here, and on an
/// entry whose file no longer leaks (or no longer exists).
const KNOWN_LEAKS: &[&str] = &[
    "no-tokio/tests/fail/async_fn_without_sleep.stderr",
    "tests/fail/attempt_timeout_error_without_from.stderr",
    "tests/fail/budget_wrong_type.stderr",
    "tests/fail/circuit_error_without_from.stderr",
    "tests/fail/circuit_wrong_type.stderr",
    "tests/fail/non_result_return_type.stderr",
    "tests/fail/on_giveup_wrong_type.stderr",
    "tests/fail/on_retry_wrong_type.stderr",
    "tests/fail/policy_wrong_type.stderr",
    "tests/fail/sleep_output_wrong.stderr",
    "tests/fail/sleep_sync_in_async_fn.stderr",
    "tests/fail/sleep_wrong_type.stderr",
    "tests/fail/timeout_error_without_from.stderr",
    "tests/fail/when_ok_wrong_argument_type.stderr",
    "tests/fail/when_wrong_argument_type.stderr",
    "tests/fail/when_wrong_return_type.stderr",
    "tests/fail/when_wrong_type_through_macro_rules.stderr",
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
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable .stderr");
        let names: Vec<&str> = FORBIDDEN
            .iter()
            .copied()
            .filter(|name| text.contains(name))
            .collect();
        if !names.is_empty() {
            let relative = file.strip_prefix(root).expect("under ui-tests/");
            let relative = relative.to_string_lossy().replace('\\', "/");
            leaking.push((relative, names));
        }
    }

    let unexpected: Vec<String> = leaking
        .iter()
        .filter(|(file, _)| !KNOWN_LEAKS.contains(&file.as_str()))
        .map(|(file, names)| format!("{file}: {}", names.join(", ")))
        .collect();
    let stale: Vec<&str> = KNOWN_LEAKS
        .iter()
        .copied()
        .filter(|known| !leaking.iter().any(|(file, _)| file == known))
        .collect();
    assert!(
        unexpected.is_empty(),
        "compiler output that names the macro's internals:\n{}",
        unexpected.join("\n")
    );
    assert!(
        stale.is_empty(),
        "KNOWN_LEAKS entries that no longer leak (remove them): {stale:?}"
    );
}
