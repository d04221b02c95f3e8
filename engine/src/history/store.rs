//! The history store: a folder of result files, one per run, under names that never collide
//! (`DIR/<spec-slug>/<started_at>-<commit>-<hash>.json`), and the reading of such a folder (or
//! of any folder of result files) back, in time order.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use sha2::{Digest as _, Sha256};

use crate::result::{self, ReadError, RunResult, SourceInfo};

/// A result read from a history, with the file it came from.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The result file.
    pub path: PathBuf,
    /// What it holds (upgraded to the current version as it was read).
    pub result: RunResult,
}

/// Adds the result file `result` to the history `dir` (created when missing) and returns the
/// stored file's path: `dir/<spec-slug>/<started_at as 20261127T160512.123456Z>-<commit, 12
/// hex, or "unknown">-<SHA-256 of the stored bytes, 8 hex>.json`. The parts of `source` that
/// are set win over what the result records (`--branch`, `--commit`, `--commit-url`), and the
/// stored file records the outcome in its `source`; a `--commit` that differs from the
/// recorded one drops the recorded `commit_url` (it named the other commit) unless one is
/// given. Written whole or not at all (a temporary file renamed); adding the same result with
/// the same overrides again is a no-op (same bytes, same name), and concurrent writers never
/// write one file. Errors: the result cannot be read (`ReadError`), the folder cannot be
/// created or written.
pub(crate) fn add(dir: &Path, result: &Path, source: &SourceInfo) -> anyhow::Result<PathBuf> {
    let mut run = result::read(result)?;
    run.source = merged_source(run.source.take(), source);
    let mut bytes = serde_json::to_vec(&run)?;
    bytes.push(b'\n');
    let hash = Sha256::digest(&bytes);
    let folder = dir.join(slug(&run.spec.name));
    let name = format!(
        "{}-{}-{}.json",
        stamp(&run.started_at),
        commit_part(run.source.as_ref()),
        &hex(&hash)[..8]
    );
    let path = folder.join(name);
    if path.is_file() {
        return Ok(path);
    }
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create the folder `{}`", folder.display()))?;
    result::OutFile::create(&path)?
        .write_bytes(&bytes)
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    Ok(path)
}

/// The recorded source with the set parts of `overrides` winning; `None` when nothing is known.
fn merged_source(recorded: Option<SourceInfo>, overrides: &SourceInfo) -> Option<SourceInfo> {
    let mut source = recorded.unwrap_or_default();
    if let Some(commit) = &overrides.commit {
        if source.commit.as_ref() != Some(commit) {
            source.commit_url = None;
        }
        source.commit = Some(commit.clone());
    }
    if let Some(branch) = &overrides.branch {
        source.branch = Some(branch.clone());
    }
    if let Some(url) = &overrides.commit_url {
        source.commit_url = Some(url.clone());
    }
    (source != SourceInfo::default()).then_some(source)
}

/// A spec name as a folder name: lowercase ASCII letters and digits, other runs of characters
/// as one `-`, at most 64 characters; `spec` when nothing is left.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(64).collect();
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "spec".to_string()
    } else {
        out.to_string()
    }
}

/// `started_at` (RFC 3339) as `20261127T160512.123456Z`: to the microsecond, without `-` and
/// `:` (which Windows refuses in names); `unknown-time` when it does not parse.
fn stamp(started_at: &str) -> String {
    match humantime::parse_rfc3339_weak(started_at) {
        Ok(time) => humantime::format_rfc3339_micros(time)
            .to_string()
            .replace(['-', ':'], ""),
        Err(_) => "unknown-time".to_string(),
    }
}

/// The first 12 hex digits of the commit, or `unknown` (also for a commit that is not hex).
fn commit_part(source: Option<&SourceInfo>) -> String {
    source
        .and_then(|s| s.commit.as_deref())
        .filter(|c| !c.is_empty() && c.chars().all(|c| c.is_ascii_hexdigit()))
        .map_or_else(
            || "unknown".to_string(),
            |c| c.chars().take(12).collect::<String>().to_ascii_lowercase(),
        )
}

/// Lowercase hex digits of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The results of `paths` in time order: files, and folders read recursively (`*.json` files;
/// names starting with `.`, such as `.git`, skipped). A named file must be a result (else its
/// `ReadError`); a file inside a folder that is not one (another JSON document, a result that
/// cannot be read) is skipped with a warning on stderr, and a folder with no result at all is
/// an error (`ReadError::Invalid`). Replaces the reading of `--baseline-history` and of
/// `loadgate report`'s folders.
pub(crate) fn read(paths: &[PathBuf]) -> anyhow::Result<Vec<RunResult>> {
    let mut results = Vec::new();
    for path in paths {
        let found = entries(std::slice::from_ref(path))?;
        if found.is_empty() {
            anyhow::bail!(ReadError::Invalid {
                path: path.display().to_string(),
                reason: "the folder has no .json result files".to_string(),
            });
        }
        results.extend(found);
    }
    sort(&mut results);
    Ok(results.into_iter().map(|e| e.result).collect())
}

/// The entries of `paths`, read as [`read`] reads them, in time order; an empty folder gives
/// none (not an error). Errors: a named file that is not a result, a folder that cannot be
/// listed.
pub(crate) fn entries(paths: &[PathBuf]) -> anyhow::Result<Vec<Entry>> {
    let mut found = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut files = Vec::new();
            json_files(path, &mut files)?;
            files.sort();
            for file in files {
                match result::read(&file) {
                    Ok(result) => found.push(Entry { path: file, result }),
                    Err(e) => eprintln!(
                        "loadgate: warning: skipped {}",
                        crate::spec::printable(&format!("{e:#}"))
                    ),
                }
            }
        } else {
            let result = result::read(path)?;
            found.push(Entry {
                path: path.clone(),
                result,
            });
        }
    }
    sort(&mut found);
    Ok(found)
}

/// The `*.json` files under `dir`, recursively; names starting with `.` skipped, symbolic
/// links to folders not followed.
fn json_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let listing =
        std::fs::read_dir(dir).with_context(|| format!("cannot list `{}`", dir.display()))?;
    for entry in listing {
        let entry = entry.with_context(|| format!("cannot list `{}`", dir.display()))?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            json_files(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "json") {
            out.push(path);
        }
    }
    Ok(())
}

/// Time order: by `started_at` as a time (an unparsable one first), then by path.
fn sort(entries: &mut [Entry]) {
    entries.sort_by_cached_key(|e| {
        (
            humantime::parse_rfc3339_weak(&e.result.started_at).ok(),
            e.path.clone(),
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_folder_names() {
        assert_eq!(slug("Checkout API (v2)"), "checkout-api-v2");
        assert_eq!(slug("../etc"), "etc");
        assert_eq!(slug("日本"), "spec");
    }

    #[test]
    fn stamps_keep_microseconds() {
        assert_eq!(
            stamp("2026-11-27T16:05:12.123456Z"),
            "20261127T160512.123456Z"
        );
        assert_eq!(stamp("2026-11-27T16:05:12.123Z"), "20261127T160512.123000Z");
        assert_eq!(stamp("yesterday"), "unknown-time");
    }

    #[test]
    fn set_parts_win() {
        let recorded = SourceInfo {
            branch: Some("feature".into()),
            commit: Some("aaaa".into()),
            commit_url: Some("https://example.com/commit/aaaa".into()),
        };
        let merged = merged_source(
            Some(recorded.clone()),
            &SourceInfo {
                branch: Some("main".into()),
                commit: Some("bbbb".into()),
                commit_url: None,
            },
        )
        .unwrap();
        assert_eq!(merged.branch.as_deref(), Some("main"));
        assert_eq!(merged.commit.as_deref(), Some("bbbb"));
        assert_eq!(merged.commit_url, None, "the url named the other commit");
        let kept = merged_source(Some(recorded.clone()), &SourceInfo::default());
        assert_eq!(kept, Some(recorded));
        assert_eq!(merged_source(None, &SourceInfo::default()), None);
    }
}
