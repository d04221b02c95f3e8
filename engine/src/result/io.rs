//! Reading result files (checked as they are read), writing them and the other artifacts
//! whole or not at all ([`OutFile`]), and the histograms' text encoding (from `measure`,
//! where the run encodes each second's).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::upgrade::{self, OLDEST_VERSION, Unreadable};
use super::{RESULT_VERSION, RunResult};
pub use crate::measure::decode_histogram;
pub(crate) use crate::measure::encode_histogram;

/// Writes `result` as compact JSON (one line; `jq .` shows it indented) to `path`, whole or
/// not at all: [`OutFile::create`], then
/// [`OutFile::write`].
pub fn write(result: &RunResult, path: &Path) -> anyhow::Result<()> {
    OutFile::create(path)?.write(result)
}

/// A file written whole or not at all: a temporary file in the target's folder, created when
/// a command starts ([`OutFile::create`]), filled and renamed onto the target at its end
/// ([`OutFile::write`]). Created first, it tells before any load is sent that the folder
/// takes the file; a process that ends before the rename leaves the target as it was. A target
/// that is not a regular file (`/dev/stdout`, `/dev/null`, a named pipe) is written in place:
/// renaming onto it would replace the device with a file.
#[derive(Debug)]
pub struct OutFile {
    /// Where the file goes, as given.
    path: PathBuf,
    /// Where the bytes go first.
    file: Destination,
}

/// Where an [`OutFile`]'s bytes go.
#[derive(Debug)]
enum Destination {
    /// A temporary file in the target's folder (deleted when dropped unwritten), renamed onto
    /// the target once written.
    Temporary(tempfile::NamedTempFile),
    /// The target itself, opened for writing: a device or a named pipe.
    InPlace(std::fs::File),
}

/// Why a file cannot be written where it was asked for (`--out`).
#[derive(Debug, thiserror::Error)]
#[error("cannot write `{path}`: {reason}")]
pub struct OutError {
    /// The file, as given.
    pub path: String,
    /// Why not, in words: the folder does not exist, it is a folder, permission denied, ...
    pub reason: String,
}

impl OutFile {
    /// Creates the temporary file in `path`'s folder (the working directory for a bare file
    /// name). Errors: `path` is a folder, or its folder does not take a new file (missing, not
    /// a folder, not writable, a read-only file system).
    pub fn create(path: &Path) -> Result<OutFile, OutError> {
        let shown = path.display().to_string();
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                return Err(OutError {
                    path: shown,
                    reason: "it is a folder: give a file name in it, such as `result.json`"
                        .to_string(),
                });
            }
            Ok(meta) if !meta.is_file() => {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| OutError {
                        path: shown,
                        reason: e.to_string(),
                    })?;
                return Ok(OutFile {
                    path: path.to_path_buf(),
                    file: Destination::InPlace(file),
                });
            }
            _ => {}
        }
        let file = tempfile::NamedTempFile::new_in(dir).map_err(|e| OutError {
            path: shown,
            // The kind alone: the error's text names the temporary file, not the user's.
            reason: match e.kind() {
                std::io::ErrorKind::NotFound => {
                    format!("the folder `{}` does not exist", dir.display())
                }
                kind => format!("cannot create a file in `{}`: {kind}", dir.display()),
            },
        })?;
        Ok(OutFile {
            path: path.to_path_buf(),
            file: Destination::Temporary(file),
        })
    }

    /// Writes `value` as compact JSON into the temporary file, flushes it to disk and renames
    /// it onto the path. Compact: with one histogram per second for the run and each target,
    /// indentation alone would add about 40% (a 10-minute, 10-target run: 3.5 MB pretty,
    /// 2.5 MB compact; bench/shards/size.sh). Errors: writing or renaming failed (the path then keeps what it had).
    pub fn write(self, value: &impl serde::Serialize) -> anyhow::Result<()> {
        let path = self.path.clone();
        self.fill(|out| {
            serde_json::to_writer(&mut *out, value)?;
            out.write_all(b"\n")
        })
        .with_context(|| format!("cannot write the result to `{}`", path.display()))
    }

    /// Writes `bytes` into the temporary file, flushes it to disk and renames it onto the path:
    /// a report (`--output`). Errors: writing or renaming failed (a full disk: the path then
    /// keeps what it had, and the temporary file is deleted).
    pub fn write_bytes(self, bytes: &[u8]) -> std::io::Result<()> {
        self.fill(|out| out.write_all(bytes))
    }

    /// Fills the temporary file by `write`, flushes it to disk and renames it onto the path.
    fn fill(
        self,
        write: impl FnOnce(&mut std::io::BufWriter<&mut std::fs::File>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let OutFile { path, file } = self;
        let mut file = match file {
            Destination::Temporary(file) => file,
            Destination::InPlace(mut file) => {
                let mut out = std::io::BufWriter::new(&mut file);
                write(&mut out)?;
                return out.flush();
            }
        };
        // Buffered: serde_json writes token by token, a system call each on a bare file.
        let mut out = std::io::BufWriter::new(file.as_file_mut());
        write(&mut out)?;
        out.flush()?;
        drop(out);
        // Readable by others, like any file written with the default umask (a temporary file
        // starts at 0600; a container step running as another user must read the result).
        // Windows has no such mode: the file inherits its directory's access rules.
        #[cfg(unix)]
        file.as_file()
            .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
        file.as_file().sync_all()?;
        // `persist`'s error holds the io::Error; the caller says where.
        file.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Appends `bytes` to `file` (opened for appending) whole or not at all: in one write when the
/// disk takes it, and a write cut short (a full disk) undone by cutting the file back to its
/// length before, so that no half line is left for the next one to be glued to. Errors: the
/// system's, of the write (the file is then as it was, unless another process appended to it
/// meanwhile).
pub fn append_whole(file: &mut std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
    let before = file.metadata()?.len();
    file.write_all(bytes).inspect_err(|_| {
        let _ = file.set_len(before);
    })
}

/// Why a result file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file cannot be read, is not a regular file, or is larger than
    /// 256 MiB (`files::MAX_RESULT_BYTES`).
    #[error(transparent)]
    File(#[from] crate::files::FileError),
    /// The file is not JSON, not a result of a version this loadgate reads, or a field is
    /// wrong (named by its path, e.g. `targets[1].histogram`).
    #[error("`{path}` is not a loadgate result: {reason}")]
    Invalid {
        /// The file, as given.
        path: String,
        /// What is wrong, in words, naming the field.
        reason: String,
    },
    /// A `result_version` newer than this loadgate's (or older than the oldest it reads).
    #[error(
        "`{path}` has result_version {found}; this loadgate reads versions {OLDEST_VERSION} to \
         {RESULT_VERSION}: produce the results with the same or an older loadgate"
    )]
    Version {
        /// The file, as given.
        path: String,
        /// Its `result_version`.
        found: u64,
    },
}

/// Reads a result file: parsed as JSON, its `result_version` checked before anything else,
/// brought up to date (results of earlier versions, or written before a field existed, see
/// `upgrade.rs`), read into a [`RunResult`], then checked (`check`: a measured window of
/// positive length, histograms that decode). Every error about the content names the field.
pub fn read(path: &Path) -> Result<RunResult, ReadError> {
    let shown = path.display().to_string();
    let invalid = |reason: String| ReadError::Invalid {
        path: shown.clone(),
        reason,
    };
    let mut value = read_json(path)?;
    upgrade::upgrade(&mut value).map_err(|e| match e {
        Unreadable::Version(found) => ReadError::Version {
            path: shown.clone(),
            found,
        },
        Unreadable::NoVersion => invalid("no `result_version`".to_string()),
    })?;
    let result: RunResult = from_value(value).map_err(invalid)?;
    check(&result, "").map_err(invalid)?;
    Ok(result)
}

/// The largest integer a result may hold: 2^53 - 1, the largest that every JSON reader (the
/// action's JavaScript among them, where numbers are IEEE 754 doubles) reads exactly (RFC 8259,
/// section 6). It also keeps the sums of a merge of up to [`super::merge::MAX_SHARDS`] results
/// within `u64`.
pub const MAX_EXACT_INTEGER: u64 = (1 << 53) - 1;

/// Reads `path` as JSON whose integers every reader takes exactly (at most
/// [`MAX_EXACT_INTEGER`]): the first step of reading a result or a `loadgate ab` document.
/// Errors: the file cannot be read, is not a regular file or is over 256 MiB
/// ([`ReadError::File`]); it is not JSON, or holds a larger
/// integer ([`ReadError::Invalid`], naming the field).
pub(super) fn read_json(path: &Path) -> Result<serde_json::Value, ReadError> {
    let invalid = |reason: String| ReadError::Invalid {
        path: path.display().to_string(),
        reason,
    };
    let text = crate::files::bounded_read_text(path, crate::files::MAX_RESULT_BYTES, "the result")?;
    let value = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    exact_integers(&value, &mut String::new()).map_err(invalid)?;
    Ok(value)
}

/// Refuses an integer beyond [`MAX_EXACT_INTEGER`] anywhere in `value`, naming its path
/// (`time_series[0].responses`); `at` is the path so far.
fn exact_integers(value: &serde_json::Value, at: &mut String) -> Result<(), String> {
    use serde_json::Value;
    match value {
        Value::Number(n) if n.is_u64() || n.is_i64() => {
            let magnitude = n.as_u64().or_else(|| n.as_i64().map(i64::unsigned_abs));
            if magnitude.is_some_and(|m| m > MAX_EXACT_INTEGER) {
                return Err(format!(
                    "`{at}` is {n}: a result's integers are at most 2^53 - 1 \
                     ({MAX_EXACT_INTEGER}), the largest JSON readers take exactly"
                ));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = at.len();
                at.push_str(&format!("[{i}]"));
                exact_integers(item, at)?;
                at.truncate(len);
            }
        }
        Value::Object(fields) => {
            for (key, item) in fields {
                let len = at.len();
                if !at.is_empty() {
                    at.push('.');
                }
                at.push_str(key);
                exact_integers(item, at)?;
                at.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Reads `value` into a `T`; an error names the field by its path from the top (`total.
/// requests: invalid type: string "many", expected u64`).
pub(super) fn from_value<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.inner().to_string()
        } else {
            format!("`{path}`: {}", e.inner())
        }
    })
}

/// Checks what the types do not: a measured window of positive length (0 only when no
/// request ended: a run stopped before measuring), and latency and phase histograms that
/// decode. `prefix` comes before each field's path (`baseline.` for a side of a `loadgate ab`
/// document). Errors: the field's path and what is wrong with it.
pub(super) fn check(result: &RunResult, prefix: &str) -> Result<(), String> {
    let d = result.duration_s;
    if !(d > 0.0 || (d == 0.0 && result.total.requests == 0)) {
        return Err(format!(
            "`{prefix}duration_s` is {d}: a result measures a window of positive length \
             (0 only when no request ended)"
        ));
    }
    let targets = std::iter::once(("total".to_string(), &result.total)).chain(
        result
            .targets
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("targets[{i}]"), t)),
    );
    for (at, target) in targets {
        let mut histograms = vec![("histogram".to_string(), &target.histogram)];
        if let Some(p) = &target.phases_us {
            for (name, phase) in [
                ("dns", &p.dns),
                ("connect", &p.connect),
                ("tls", &p.tls),
                ("ttfb", &p.ttfb),
                ("body", &p.body),
            ] {
                if let Some(phase) = phase {
                    histograms.push((format!("phases_us.{name}.histogram"), &phase.histogram));
                }
            }
        }
        for (field, text) in histograms {
            decode_histogram(text).map_err(|e| {
                format!("`{prefix}{at}.{field}` is not an HdrHistogram (V2, base64): {e}")
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_integer_beyond_2_pow_53_is_refused_by_its_path() {
        let value = serde_json::json!({"time_series": [{"responses": 1}, {"responses": u64::MAX}]});
        let err = exact_integers(&value, &mut String::new()).unwrap_err();
        assert!(
            err.starts_with("`time_series[1].responses` is 18446744073709551615"),
            "{err}"
        );
        let fine = serde_json::json!({"total": {"requests": MAX_EXACT_INTEGER, "mean_us": 1e300}});
        assert_eq!(exact_integers(&fine, &mut String::new()), Ok(()));
    }

    #[test]
    fn histograms_round_trip() {
        let mut h = crate::measure::latency_histogram();
        for v in [1u64, 250, 1_000, 50_000, 2_000_000] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        assert!(decode_histogram("not base64!").is_err());
    }
}
