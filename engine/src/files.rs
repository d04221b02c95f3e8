//! Reading a file the user named, whole, within a limit: the one way the engine does it (a
//! spec, a body, a data file, a certificate, a key, a CA bundle, a template, a result).
//!
//! Only a regular file is read: a named pipe would wait for a writer, and a device such as
//! `/dev/zero` never ends. The file is opened without waiting (`O_NONBLOCK`, which a regular
//! file ignores) and checked on the open handle, so that what is checked is what is read.
//! Then at most `limit` bytes are read, and one more to tell that the file is larger.

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// 1 MiB, in bytes.
pub(crate) const MIB: u64 = 1 << 20;

/// The most bytes of a request body file (`body_file`) kept in memory for a run: 64 MiB.
pub(crate) const MAX_BODY_BYTES: u64 = 64 * MIB;
/// The most bytes of a PEM file (`ca_file`, `client_cert`, `client_key`, and the certificate
/// files of `loadgate serve`): 4 MiB, some thousands of certificates.
pub(crate) const MAX_PEM_BYTES: u64 = 4 * MIB;
/// The most bytes of a result file (`report`, `compare`, `merge`, `run --baseline`, a
/// `loadgate ab` document): 256 MiB, about 70 times a 10-minute run of 10 targets (3.5 MB,
/// bench/shards/size.sh).
pub(crate) const MAX_RESULT_BYTES: u64 = 256 * MIB;
/// The most bytes of a report template (`--templates`): 4 MiB.
pub(crate) const MAX_TEMPLATE_BYTES: u64 = 4 * MIB;

/// Why a file could not be read: what it is for (`the body file`) and its path in every
/// message, then the [`Problem`].
#[derive(Debug, thiserror::Error)]
#[error("cannot read {what} `{}`: {problem}", path.display())]
pub struct FileError {
    /// What the file is for, in words (`the CA file`).
    pub(crate) what: &'static str,
    /// The file, as given (joined to the spec's folder when relative to it).
    pub(crate) path: PathBuf,
    /// What is wrong with it.
    pub(crate) problem: Problem,
}

/// What is wrong with a file that could not be read, in words that do not name it (a caller
/// may name it as the spec writes it, before `${VAR}` interpolation).
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// It could not be opened or read (missing, permission denied, ...).
    // The system's reason is part of the message, not a `source`: printed with its chain, the
    // error would say it twice.
    #[error("{0}")]
    Io(std::io::Error),
    /// It is a folder, a named pipe, a device or a socket.
    #[error(
        "it is {kind}, not a regular file (at most {} is read, from a regular file)",
        size(*limit)
    )]
    NotAFile {
        /// What it is instead, in words (`a named pipe`).
        kind: &'static str,
        /// The most bytes read from such a file.
        limit: u64,
    },
    /// It holds more than the limit.
    #[error("it is larger than {}, the most loadgate reads for it", size(*limit))]
    TooLarge {
        /// The most bytes read from such a file.
        limit: u64,
    },
}

/// `limit` bytes in words: whole MiB as such (`64 MiB`), else bytes.
fn size(limit: u64) -> String {
    if limit >= MIB && limit.is_multiple_of(MIB) {
        format!("{} MiB", limit / MIB)
    } else {
        format!("{limit} bytes")
    }
}

/// Reads the regular file at `path` whole, when it holds at most `limit` bytes. `what` names
/// the file in errors (`the body file`). Errors ([`FileError`]): it cannot be opened or read,
/// it is not a regular file, or it is larger than `limit`. Never waits for a writer, never
/// reads more than `limit + 1` bytes.
pub(crate) fn bounded_read(
    path: &Path,
    limit: u64,
    what: &'static str,
) -> Result<Vec<u8>, FileError> {
    let error = |problem| FileError {
        what,
        path: path.to_path_buf(),
        problem,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        // Opening a named pipe waits for a writer, unless without waiting.
        options.custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits());
    }
    let file = options.open(path).map_err(|e| error(Problem::Io(e)))?;
    let meta = file.metadata().map_err(|e| error(Problem::Io(e)))?;
    if !meta.is_file() {
        let kind = kind(&meta.file_type());
        return Err(error(Problem::NotAFile { kind, limit }));
    }
    if meta.len() > limit {
        return Err(error(Problem::TooLarge { limit }));
    }
    // The size is known, but a file of the kernel (`/proc`) says 0 and holds more: read one
    // byte past the limit to tell.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(Problem::Io(e)))?;
    if bytes.len() as u64 > limit {
        return Err(error(Problem::TooLarge { limit }));
    }
    Ok(bytes)
}

/// [`bounded_read`] as UTF-8 text. Errors: those of [`bounded_read`], and text that is not
/// UTF-8 ([`Problem::Io`] of kind `InvalidData`).
pub(crate) fn bounded_read_text(
    path: &Path,
    limit: u64,
    what: &'static str,
) -> Result<String, FileError> {
    let bytes = bounded_read(path, limit, what)?;
    String::from_utf8(bytes).map_err(|e| FileError {
        what,
        path: path.to_path_buf(),
        problem: Problem::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            e.utf8_error(),
        )),
    })
}

/// What a file that is not a regular one is, in words.
fn kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if file_type.is_fifo() {
            return "a named pipe";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_within_the_limit_is_read_and_one_over_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(bounded_read(&path, 5, "the file").unwrap(), b"12345");
        let e = bounded_read(&path, 4, "the file").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "cannot read the file `{}`: it is larger than 4 bytes, the most loadgate reads \
                 for it",
                path.display()
            )
        );
    }

    #[test]
    fn a_folder_is_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = bounded_read(dir.path(), MIB, "the body file").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("it is a folder, not a regular file (at most 1 MiB"),
            "{text}"
        );
        assert!(text.contains(&dir.path().display().to_string()), "{text}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_device_is_refused_before_reading() {
        let e = bounded_read(Path::new("/dev/zero"), MIB, "the CA file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot read the CA file `/dev/zero`: it is a device, not a regular file (at most \
             1 MiB is read, from a regular file)"
        );
    }
}
