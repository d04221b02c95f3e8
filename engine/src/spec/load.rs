//! Reading a spec file: YAML text -> a JSON value for schema validation, with the line and
//! column of every field path, so that diagnostics point into the file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A 1-based line and column in the spec file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub line: u64,
    pub column: u64,
}

/// A spec file as read: its text, the YAML as a JSON value, and where each field is.
#[derive(Debug, Clone)]
pub struct SourceSpec {
    pub path: PathBuf,
    pub text: String,
    pub value: serde_json::Value,
    /// Field path (`targets[1].expect.status`, root is ``) -> where its value starts.
    locations: HashMap<String, Location>,
}

/// Why a spec file could not be read as YAML.
#[derive(Debug, thiserror::Error)]
pub enum SpecLoadError {
    #[error("cannot read spec `{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: u64,
        column: u64,
        message: String,
    },
}

impl SourceSpec {
    /// Reads and parses the spec file at `path`.
    pub fn read(path: &Path) -> Result<SourceSpec, SpecLoadError> {
        let text = std::fs::read_to_string(path).map_err(|source| SpecLoadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        SourceSpec::parse(path.to_path_buf(), text)
    }

    /// Parses `text` (named `path` in errors).
    pub fn parse(path: PathBuf, text: String) -> Result<SourceSpec, SpecLoadError> {
        let value = serde_saphyr::from_str(&text).map_err(|e| SpecLoadError::Syntax {
            path: path.clone(),
            line: 0,
            column: 0,
            message: e.to_string(),
        })?;
        Ok(SourceSpec {
            path,
            text,
            value,
            locations: HashMap::new(),
        })
    }

    /// Where the value at `field_path` starts; falls back to the nearest ancestor.
    pub fn locate(&self, field_path: &str) -> Option<Location> {
        self.locations.get(field_path).copied()
    }
}
