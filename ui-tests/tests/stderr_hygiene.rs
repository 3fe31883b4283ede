//! No pinned compiler output shows a user a name of the macro's internals:
//! `__private` (the runtime's hidden module), `__backoff_*` (the expansion's
//! locals), an `async block@...` (the expansion's futures), or the
//! runtime's internal names for the traits it checks values against (rustc
//! prints those under the names `backoff_runtime::retry_args` gives them,
//! which read as the argument). Checks every `.stderr` under `ui-tests/`,
//! the `no-tokio` cases included.

use std::path::{Path, PathBuf};

const FORBIDDEN: [&str; 8] = [
    "__private",
    "__backoff",
    "async block@",
    "RetryResult",
    "ErrorOf",
    "AsPolicy",
    "AsBudget",
    "AsCircuit",
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

    let leaks: Vec<String> = leaking
        .iter()
        .map(|(file, names)| format!("{file}: {}", names.join(", ")))
        .collect();
    assert!(
        leaks.is_empty(),
        "compiler output that names the macro's internals:\n{}",
        leaks.join("\n")
    );
}
