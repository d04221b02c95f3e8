//! Validation: the spec's YAML against the published JSON Schema, then the semantic checks
//! of the plan (`plan::build`). Every problem becomes a [`Diagnostic`] naming the file, the field
//! path and the line:column; all are reported at once.

mod schema;

use std::fmt;
use std::path::PathBuf;

use crate::plan::{self, BuildContext, Plan};
use crate::spec::{Location, SourceSpec, Spec, printable};
use schema::{float_numbers, schema_findings};

/// One problem in a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The spec file, as given on the command line.
    pub file: PathBuf,
    /// Field path such as `targets[1].expect.status`; empty for the whole document.
    pub path: String,
    /// Where in the file: the field's value, its key for an unknown field, or the
    /// enclosing mapping for a missing one.
    pub location: Option<Location>,
    /// What is wrong, and what was expected.
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

/// Every problem found in a spec, in the order they appear in the file.
#[derive(Debug, Clone, thiserror::Error)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        write!(
            f,
            "invalid spec ({n} error{}):",
            if n == 1 { "" } else { "s" }
        )?;
        for d in &self.0 {
            write!(f, "\n  {d}")?;
        }
        Ok(())
    }
}

/// The JSON Schema of the spec, generated from its Rust types (`spec::Spec`).
pub fn spec_schema() -> serde_json::Value {
    crate::result::published_schema::<Spec>()
}

/// Validates `source` and resolves it into a plan.
///
/// First the YAML is checked against [`spec_schema`]; if it does not match, every mismatch is
/// returned and nothing else is checked. Then the spec is resolved by `plan::build`, whose
/// errors (bad thresholds, unset `${VAR}`s, conflicting fields, ...) are returned together.
/// `var` looks up `${NAME}` references.
pub fn check(
    source: &SourceSpec,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Plan, Diagnostics> {
    // Paths and messages may quote the spec (a key, a value): control characters escaped.
    let diagnostic = |path: String, message: String, at_key: bool| Diagnostic {
        file: source.path.clone(),
        location: if at_key {
            source.locate_key(&path)
        } else {
            source.locate(&path)
        },
        path: printable(&path),
        message: printable(&message),
    };
    let findings = schema_findings(&source.value);
    if !findings.is_empty() {
        return Err(sorted(
            findings
                .into_iter()
                .map(|f| diagnostic(f.path, f.message, f.at_key))
                .collect(),
        ));
    }
    let spec: Spec = serde_json::from_value(source.value.clone()).map_err(|e| {
        // JSON Schema's `integer` admits `2.0`; serde does not. Point at such numbers, or
        // fall back to serde's message for the whole document.
        let mut floats = Vec::new();
        float_numbers(&source.value, String::new(), &mut floats);
        if floats.is_empty() {
            return Diagnostics(vec![diagnostic(String::new(), e.to_string(), false)]);
        }
        sorted(
            floats
                .into_iter()
                .map(|(path, n)| {
                    let message =
                        format!("expected a whole number, without a decimal point, found `{n}`");
                    diagnostic(path, message, false)
                })
                .collect(),
        )
    })?;
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
    let too_many = too_many_targets(&spec);
    match plan::build(&spec, &ctx) {
        Ok(plan) if too_many.is_none() => Ok(plan),
        built => Err(sorted(
            built
                .err()
                .unwrap_or_default()
                .into_iter()
                .map(|e| (e.path, e.message))
                .chain(too_many)
                .map(|(path, message)| diagnostic(path, message, false))
                .collect(),
        )),
    }
}

/// Most targets a spec may have, flow steps included (each step is a target), so that what a
/// run records per target (its histograms, 0.1 to 1 MB; a sample per second of its time
/// series) stays within the memory of a CI runner (docs/spec.md, "What a target costs").
pub const MAX_TARGETS: usize = 2_000;

/// The field path and message when `spec` has more than [`MAX_TARGETS`] targets (flow steps
/// included).
fn too_many_targets(spec: &Spec) -> Option<(String, String)> {
    let steps: usize = spec.flows.iter().map(|f| f.steps.len()).sum();
    // With `scenarios`, a spec may give both.
    let (path, count, what) = match (spec.targets.is_empty(), spec.flows.is_empty()) {
        (_, true) => ("targets", spec.targets.len(), "targets"),
        (true, false) => ("flows", steps, "flow steps (each step is a target)"),
        (false, false) => (
            "flows",
            spec.targets.len() + steps,
            "targets and flow steps (each step is a target)",
        ),
    };
    (count > MAX_TARGETS).then(|| {
        (
            path.to_string(),
            format!(
                "{count} {what}: at most {MAX_TARGETS}. Each target's histograms cost 0.1 to \
                 1 MB and its time series grows with the run (docs/spec.md, \"What a target \
                 costs\"); split the spec into several runs"
            ),
        )
    })
}

/// Orders diagnostics as they appear in the file (those without a location last), and drops
/// duplicates.
fn sorted(mut diagnostics: Vec<Diagnostic>) -> Diagnostics {
    diagnostics.sort_by(|a, b| {
        let key = |d: &Diagnostic| {
            d.location
                .map_or((u64::MAX, u64::MAX), |l| (l.line, l.column))
        };
        key(a).cmp(&key(b)).then_with(|| a.path.cmp(&b.path))
    });
    diagnostics.dedup();
    Diagnostics(diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_display_one_per_line() {
        let diagnostic = |line, path: &str, message: &str| Diagnostic {
            file: PathBuf::from("specs/a.yaml"),
            path: path.to_string(),
            location: Some(Location { line, column: 3 }),
            message: message.to_string(),
        };
        let one = Diagnostics(vec![diagnostic(2, "", "expected a mapping")]);
        assert_eq!(
            one.to_string(),
            "invalid spec (1 error):\n  specs/a.yaml:2:3: expected a mapping"
        );
        let two = Diagnostics(vec![
            diagnostic(4, "load", "missing"),
            Diagnostic {
                location: None,
                ..diagnostic(0, "name", "bad")
            },
        ]);
        assert_eq!(
            two.to_string(),
            "invalid spec (2 errors):\n  specs/a.yaml:4:3: load: missing\n  specs/a.yaml: name: bad"
        );
    }

    #[test]
    fn diagnostics_are_sorted_by_position_and_deduplicated() {
        let at = |line: Option<u64>, column, path: &str| Diagnostic {
            file: PathBuf::from("a.yaml"),
            path: path.to_string(),
            location: line.map(|line| Location { line, column }),
            message: "m".to_string(),
        };
        let sorted = sorted(vec![
            at(None, 0, "z"),
            at(Some(9), 1, "b"),
            at(Some(2), 7, "a"),
            at(Some(9), 1, "b"),
            at(Some(2), 3, "c"),
        ]);
        let order: Vec<&str> = sorted.0.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(order, ["c", "a", "b", "z"]);
    }
}

#[cfg(test)]
mod scenario_tests;
