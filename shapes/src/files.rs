//! `io::Result` file functions taking `impl AsRef<Path>` (std's `fs` shape).

use std::fs;
use std::io;
use std::path::Path;

use backoff_runtime::retry;

/// Borrows the path: no clone needed.
#[retry(immediate, attempts = 3)]
pub fn read_config(path: impl AsRef<Path>) -> io::Result<String> {
    fs::read_to_string(path.as_ref())
}

/// Moves the path into `fs::read_to_string`: `clone(path)`, which needs the
/// argument to be `Clone` (`&Path`, `PathBuf`, `String` are).
#[retry(immediate, attempts = 3, clone(path))]
pub fn read_moved(path: impl AsRef<Path> + Clone) -> io::Result<String> {
    fs::read_to_string(path)
}

/// Writes a file; an `async fn` with tokio's blocking pool.
#[retry(
    exponential(base = "10ms", max = "100ms"),
    attempts = 3,
    clone(contents)
)]
pub async fn write_file(path: &Path, contents: Vec<u8>) -> io::Result<()> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || fs::write(path, contents))
        .await
        .map_err(io::Error::other)?
}
