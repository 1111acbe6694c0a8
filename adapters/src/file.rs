//! Reading a file from disk: the one reader of every file the bridge reads (OpenAPI documents and
//! the files their `$ref`s name, configurations and MCP host files, lockfiles, `diff` sides, key,
//! certificate and token files, the search model and its cache).
//!
//! Why one reader: a bound that holds for some files and not others is no bound (issue 25: a FIFO
//! as a lockfile hung `lock`, `/dev/zero` as a `diff` side was read until memory ran out). Every
//! read here is
//! - **of a regular file**: the type is checked before opening (following symlinks: a link to a
//!   regular file is read, a link to `/dev/zero` is not), the file is opened with `O_NONBLOCK` (so
//!   a FIFO swapped in after the check is opened at once instead of waiting for a writer), and the
//!   type is checked again on the open file, which is the one read;
//! - **of a bounded size**, given by the caller: checked on the metadata before reading, and on
//!   the bytes read (a `/proc` file reports a size of 0, a file may grow while it is read).
//!
//! What a text holds (its depth, its YAML aliases) is bounded where it is parsed,
//! `otc_mappings::text`, which also parses what is not a file (documents fetched over HTTP). This
//! module is in otc-adapters because it is the lowest crate that does I/O (otc-mappings is pure)
//! and both the adapters and the bridge read files.

use std::fs::{File, Metadata};
use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

/// OpenAPI documents and the files their `$ref`s name (GitHub's REST description, one of the
/// largest in use, is 13 MB).
pub const MAX_DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;

/// Configurations, MCP host files, key, certificate and token files: written by people, a few KB.
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// Lockfiles and exports, which hold a whole catalog's definitions (the 5,267 tools of the shared
/// corpus are 93 MB of JSON), and `diff` sides, which may be either.
pub const MAX_CATALOG_BYTES: u64 = 512 * 1024 * 1024;

/// Why a file was not read. The message says what is wrong with the file, not which file: the
/// caller names it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// A directory, a FIFO, a device, a socket.
    #[error("it is not a regular file (it is {0})")]
    NotRegular(&'static str),
    /// Larger than the caller's limit.
    #[error("it is larger than {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// Text was wanted.
    #[error("it is not UTF-8 text")]
    NotText,
    /// The system refused (missing, no permission, an I/O error).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl FileError {
    /// Whether the file does not exist (some files are optional).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Reads `path`, a regular file of at most `limit` bytes (see the module docs). Blocking: call it
/// from a blocking thread when on the async runtime.
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    check(&std::fs::metadata(path)?, limit)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let metadata = file.metadata()?;
    check(&metadata, limit)?;
    read_open(file, &metadata, limit)
}

/// [`read`], as UTF-8 text.
pub fn read_text(path: &Path, limit: u64) -> Result<String, FileError> {
    String::from_utf8(read(path, limit)?).map_err(|_| FileError::NotText)
}

/// A regular file within `limit`, by its metadata.
fn check(metadata: &Metadata, limit: u64) -> Result<(), FileError> {
    let kind = metadata.file_type();
    if !kind.is_file() {
        return Err(FileError::NotRegular(if kind.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() {
            "a character device"
        } else if kind.is_block_device() {
            "a block device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a file"
        }));
    }
    if metadata.len() > limit {
        return Err(FileError::TooLarge { limit });
    }
    Ok(())
}

fn read_open(file: File, metadata: &Metadata, limit: u64) -> Result<Vec<u8>, FileError> {
    // Sized from the metadata (already within the limit), so a large document is not read into a
    // buffer grown by doubling: GitHub's 13 MB description took a 16.8 MB one.
    let expected = usize::try_from(metadata.len()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(expected.saturating_add(1));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge { limit });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("otc-file-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_regular_file_and_a_link_to_one_are_read() {
        let dir = sandbox("regular");
        std::fs::write(dir.join("a.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink(dir.join("a.yaml"), dir.join("link.yaml")).unwrap();
        assert_eq!(read_text(&dir.join("a.yaml"), 100).unwrap(), "a: 1\n");
        assert_eq!(read_text(&dir.join("link.yaml"), 100).unwrap(), "a: 1\n");
        assert!(matches!(
            read(&dir.join("a.yaml"), 3),
            Err(FileError::TooLarge { limit: 3 })
        ));
        assert!(read(&dir.join("missing"), 100).unwrap_err().is_not_found());
    }

    #[test]
    fn issue_25_fifos_devices_and_directories_are_refused_without_blocking() {
        let dir = sandbox("special");
        let fifo = dir.join("pipe");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero.yaml")).unwrap();
        // A FIFO without a writer: opening it for reading would block until one came.
        let err = read(&fifo, 100).unwrap_err();
        assert_eq!(err.to_string(), "it is not a regular file (it is a FIFO)");
        let err = read(&dir.join("zero.yaml"), 100).unwrap_err();
        assert!(err.to_string().contains("a character device"), "{err}");
        let err = read(&dir, 100).unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
    }

    #[test]
    fn a_proc_file_is_cut_at_the_limit_whatever_its_metadata_says() {
        // /proc files report a size of 0 and may hold more.
        let err = read(Path::new("/proc/self/maps"), 1).unwrap_err();
        assert!(matches!(err, FileError::TooLarge { limit: 1 }), "{err}");
    }
}
