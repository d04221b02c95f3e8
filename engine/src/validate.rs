//! Validation: the spec's YAML against the published JSON Schema, then the semantic checks
//! of [`crate::plan::build`]. Every problem becomes a [`Diagnostic`] naming the file, the field
//! path and the line:column; all are reported at once.

use std::fmt;
use std::path::PathBuf;

use crate::plan::{self, BuildContext, Plan};
use crate::spec::{Location, SourceSpec, Spec};

/// One problem in a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: PathBuf,
    /// Field path such as `targets[1].expect.status`; empty for the whole document.
    pub path: String,
    pub location: Option<Location>,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(loc) = self.location {
            write!(f, ":{}:{}", loc.line, loc.column)?;
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Every problem found in a spec.
#[derive(Debug, Clone, thiserror::Error)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "the spec has {} error(s):", self.0.len())?;
        for d in &self.0 {
            writeln!(f, "  {d}")?;
        }
        Ok(())
    }
}

/// The JSON Schema of the spec, generated from [`Spec`].
pub fn spec_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Spec)).expect("a schema serializes")
}

/// Validates `source` and resolves it into a plan.
pub fn check(
    source: &SourceSpec,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Plan, Diagnostics> {
    let diagnostic = |path: String, message: String| Diagnostic {
        file: source.path.clone(),
        location: source.locate(&path),
        path,
        message,
    };
    // TODO(helper): JSON Schema validation of source.value, all errors at once.
    let spec: Spec = serde_json::from_value(source.value.clone())
        .map_err(|e| Diagnostics(vec![diagnostic(String::new(), e.to_string())]))?;
    let spec_dir = source
        .path
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                std::path::Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(std::path::Path::new("."));
    let ctx = BuildContext {
        source: source.text.as_bytes(),
        spec_dir,
        var,
    };
    plan::build(&spec, &ctx).map_err(|errors| {
        Diagnostics(
            errors
                .into_iter()
                .map(|e| diagnostic(e.path, e.message))
                .collect(),
        )
    })
}
