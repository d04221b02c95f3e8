//! Reading and writing result files, and the histograms' text encoding.

use std::io::Write;
use std::path::Path;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

use super::upgrade::{self, OLDEST_VERSION, Unreadable};
use super::{RESULT_VERSION, RunResult};

/// Encodes a histogram as HdrHistogram V2 + DEFLATE, base64 (standard alphabet).
pub(crate) fn encode_histogram(histogram: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(histogram, &mut bytes)
        .expect("serializing into a Vec does not fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes a histogram written by `encode_histogram`. Errors: bad base64 or histogram data.
pub fn decode_histogram(text: &str) -> anyhow::Result<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text)?;
    Ok(Deserializer::new().deserialize(&mut bytes.as_slice())?)
}

/// Writes `result` as pretty JSON to `path`, whole or not at all (temporary file + rename).
pub fn write(result: &RunResult, path: &Path) -> anyhow::Result<()> {
    write_json(result, path)
}

/// Writes `value` as pretty JSON to `path`, whole or not at all (temporary file + rename):
/// [`write`], and any other artifact (`loadgate ab --out`).
pub(crate) fn write_json(value: &impl serde::Serialize, path: &Path) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write the result into `{}`", dir.display()))?;
    // Buffered: serde_json writes token by token, a system call each on a bare file.
    let mut out = std::io::BufWriter::new(&mut file);
    serde_json::to_writer_pretty(&mut out, value)?;
    out.write_all(b"\n")?;
    out.flush()?;
    drop(out);
    // Readable by others, like any file written with the default umask (a temporary file
    // starts at 0600; a container step running as another user must read the result). Windows
    // has no such mode: the file inherits its directory's access rules.
    #[cfg(unix)]
    file.as_file()
        .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
    file.as_file().sync_all()?;
    file.persist(path)
        .with_context(|| format!("cannot write the result to `{}`", path.display()))?;
    Ok(())
}

/// Why a result file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file cannot be read.
    #[error("cannot read the result `{path}`: {source}")]
    Io {
        /// The file, as given.
        path: String,
        /// Why reading failed.
        source: std::io::Error,
    },
    /// The file is not JSON, or not a result of a version this loadgate reads.
    #[error("`{path}` is not a loadgate result: {reason}")]
    Invalid {
        /// The file, as given.
        path: String,
        /// What is wrong, in words.
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
/// `upgrade.rs`), then read into a [`RunResult`].
pub fn read(path: &Path) -> Result<RunResult, ReadError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ReadError::Io {
        path: shown.clone(),
        source,
    })?;
    let mut value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| ReadError::Invalid {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
    upgrade::upgrade(&mut value).map_err(|e| match e {
        Unreadable::Version(found) => ReadError::Version {
            path: shown.clone(),
            found,
        },
        Unreadable::NoVersion => ReadError::Invalid {
            path: shown.clone(),
            reason: "no `result_version`".to_string(),
        },
    })?;
    serde_json::from_value(value).map_err(|e| ReadError::Invalid {
        path: shown,
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
